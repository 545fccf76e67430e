import type { Logger } from "@pgw/kit";
import type { ProviderUpdate } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import type { LifecycleEvent } from "../domain/lifecycle";
import type { Peers } from "../peers";
import { lockOperation, type Tx } from "../store";
import { applyTransition } from "./transition-operation";

const EVENTS: Record<string, LifecycleEvent> = {
  completed: { kind: "provider_completed" },
  declined: { kind: "provider_declined" },
  expired: { kind: "provider_expired" },
};

/**
 * A provider's verified status update (from routing) applied inside the consumer's transaction;
 * updates that do not apply are logged and dropped (money arriving for a cancelled payment is an
 * alert: it can never complete).
 */
export async function applyProviderUpdate(tx: Tx, update: ProviderUpdate, peers: Peers, log: Logger): Promise<void> {
  const row = await lockOperation(tx, null, { operationId: update.operationId });
  const event = EVENTS[update.status];
  if (!row || !event) {
    log.warn({ operation_id: update.operationId, status: update.status }, "provider update for no known operation or status; dropped");
    return;
  }
  const result = await applyTransition(tx, row, event, { actualAmount: update.actualAmount }, peers);
  if ("refused" in result) {
    const level = row.status === "cancelled" && update.status === "completed" ? "error" : "info";
    log[level]({ operation_id: row.id, status: row.status, update: update.status }, "provider update does not apply; dropped");
  }
}
