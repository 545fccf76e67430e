import { capturedAmount, formatAmount, type Currency } from "@pgw/contracts";
import { type Logger } from "@pgw/kit/runtime";
import type { ProviderUpdate } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { endsUncaptured, type LifecycleEvent, type Status } from "../domain/lifecycle";
import type { Peers } from "../connectors/peers";
import { lockOperation, updateOperation, type Tx } from "../store";
import { recordLateFunds } from "./reported-funds";
import { applyTransition } from "./transition-operation";

// Statuses whose outcome a receipt review or an admin decides; a provider's report does not end them.
const AWAITING_DECISION = new Set<Status>(["awaiting_confirmation", "manual_check"]);

const EVENTS: Record<string, LifecycleEvent> = {
  completed: { kind: "provider_completed" },
  declined: { kind: "provider_declined" },
  expired: { kind: "provider_expired" },
};

/**
 * A provider's verified status update (from routing) applied inside the consumer's transaction;
 * updates that do not apply are logged and dropped, except money reported (reported-funds.ts):
 * for an operation that ended without it, late funds; while a review decides, kept on the row.
 */
export async function applyProviderUpdate(tx: Tx, update: ProviderUpdate, peers: Peers, log: Logger): Promise<void> {
  const row = await lockOperation(tx, null, { operationId: update.operationId });
  const event = EVENTS[update.status];
  if (!row || !event) {
    log.warn({ operation_id: update.operationId, status: update.status }, "provider update for no known operation or status; dropped");
    return;
  }
  // Routing refuses a completion without a bookable amount, so such an update can only be a stray
  // one: it could never apply, and retrying it would only hold up the operation's later updates.
  const actualAmount = (update.actualAmount && capturedAmount(update.actualAmount, row.currency)) || undefined;
  if (update.status === "completed" && !actualAmount) {
    log.error({ alert: "provider_update_unusable_amount", operation_id: row.id, status: update.status, amount: update.actualAmount }, "provider completion with no amount to book; dropped");
    return;
  }
  const result = await applyTransition(tx, row, event, { actualAmount, providerEvidence: update.evidence }, peers, log);
  if (!("refused" in result)) return;
  if (update.status === "completed" && endsUncaptured(row.status as Status)) {
    await recordLateFunds(tx, row, actualAmount, log);
    return;
  }
  if (update.status === "completed" && AWAITING_DECISION.has(row.status as Status)) {
    await updateOperation(tx, row.id, { providerReportedAmount: actualAmount });
    log.info({ operation_id: row.id, status: row.status, amount: actualAmount }, "provider reports the money arrived; kept for the review that decides");
    return;
  }
  if (update.status === "completed" && row.status === "completed" && actualAmount && !row.actualAmount.eq(actualAmount)) {
    // The booking stands (terminal); someone must reconcile the difference with the provider.
    log.error(
      { alert: "provider_amount_mismatch", operation_id: row.id, booked: formatAmount(row.actualAmount, row.currency as Currency), reported: actualAmount },
      "provider reports another amount than the one booked for this completed operation; reconcile",
    );
    return;
  }
  if (update.status !== "completed" && AWAITING_DECISION.has(row.status as Status)) {
    // The review decides; the reviewer learns what arrived by asking the provider.
    log.warn({ alert: "provider_ended_under_review", operation_id: row.id, status: row.status, update: update.status }, "provider ended an operation a review still decides");
    return;
  }
  log.info({ operation_id: row.id, status: row.status, update: update.status }, "provider update does not apply; dropped");
}
