import { capturedAmount, type Logger } from "@pgw/kit";
import type { ProviderUpdate } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { endsUncaptured, type LifecycleEvent, type Status } from "../domain/lifecycle";
import type { Peers } from "../peers";
import { insertLateFunds, lockOperation, type Tx } from "../store";
import { applyTransition } from "./transition-operation";

const EVENTS: Record<string, LifecycleEvent> = {
  completed: { kind: "provider_completed" },
  declined: { kind: "provider_declined" },
  expired: { kind: "provider_expired" },
};

/**
 * A provider's verified status update (from routing) applied inside the consumer's transaction;
 * updates that do not apply are logged and dropped. Money arriving for an operation that ended
 * without it (cancelled, declined, expired) can never complete it, so someone must return the money:
 * it is recorded as late funds (the admin queue) and alerted.
 */
export async function applyProviderUpdate(tx: Tx, update: ProviderUpdate, peers: Peers, log: Logger): Promise<void> {
  const row = await lockOperation(tx, null, { operationId: update.operationId });
  const event = EVENTS[update.status];
  if (!row || !event) {
    log.warn({ operation_id: update.operationId, status: update.status }, "provider update for no known operation or status; dropped");
    return;
  }
  // Routing sends 2 places; events published before it did carried USDT's 6. An update with nothing
  // to book could never apply, and retrying it would only hold up the operation's later updates.
  const actualAmount = update.actualAmount ? capturedAmount(update.actualAmount) : undefined;
  if (actualAmount === null) {
    log.error({ alert: "provider_update_unusable_amount", operation_id: row.id, status: update.status, amount: update.actualAmount }, "provider update with no amount to book; dropped");
    return;
  }
  const result = await applyTransition(tx, row, event, { actualAmount }, peers);
  if (!("refused" in result)) return;
  if (update.status === "completed" && endsUncaptured(row.status as Status)) {
    const recorded = actualAmount ? await insertLateFunds(tx, row, actualAmount) : false;
    log.error({ alert: "late_funds", operation_id: row.id, status: row.status, amount: actualAmount, recorded }, "money reported for an operation that ended without it; recorded as late funds");
    return;
  }
  log.info({ operation_id: row.id, status: row.status, update: update.status }, "provider update does not apply; dropped");
}
