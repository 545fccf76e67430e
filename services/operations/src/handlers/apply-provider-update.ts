import { capturedAmount, formatAmount, type Currency } from "@pgw/contracts";
import { EventDeferred } from "@pgw/kit/events";
import { type Logger } from "@pgw/kit/runtime";
import type { ProviderUpdate } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { endsUncaptured, type LifecycleEvent, type Status } from "../domain/lifecycle";
import { providerUpdateTurn, WAITING_UPDATE_RETRY_MS } from "../domain/provider-update-order";
import type { Peers } from "../connectors/peers";
import { lockOperation, markProviderUpdatesApplied, updateOperation, type OperationRow, type Tx } from "../store";
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
 * A provider's verified status update (from routing) applied inside the consumer's transaction, in
 * its operation's order (domain/provider-update-order.ts): one whose predecessor has not been
 * applied yet is deferred (`EventDeferred`) and comes back shortly. `storedAt`: when the stream
 * stored it, which bounds that wait. Updates that do not apply are logged and dropped, except money
 * reported (reported-funds.ts): for an operation that ended without it, late funds; while a review
 * decides, kept on the row. Applied or dropped, the update takes its place in the order.
 */
export async function applyProviderUpdate(tx: Tx, update: ProviderUpdate, storedAt: Date, peers: Peers, log: Logger): Promise<void> {
  const row = await lockOperation(tx, null, { operationId: update.operationId });
  if (!row) {
    log.warn({ operation_id: update.operationId, status: update.status }, "provider update for no known operation; dropped");
    return;
  }
  const applied = row.providerUpdatesApplied;
  const turn = providerUpdateTurn(update.sequence, applied, Date.now() - storedAt.getTime());
  const facts = { operation_id: row.id, sequence: update.sequence, applied, status: update.status };
  if (turn === "wait") throw new EventDeferred(`provider update ${update.sequence} of operation ${row.id} waits for update ${applied + 1}`, WAITING_UPDATE_RETRY_MS);
  if (turn === "apply_past_gap") log.error({ alert: "provider_update_missing", ...facts }, "an earlier provider update of this operation never came; applying the later one without it");
  if (turn === "apply_late") log.warn(facts, "a provider update passed over by a later one arrived after all; applying it as it stands");
  const sequence = Math.max(applied, update.sequence);
  const recorded = await applyInTurn(tx, row, update, sequence, peers, log);
  if (!recorded && sequence !== applied) await markProviderUpdatesApplied(tx, row.id, sequence);
}

/** The update applied to `row`; answers whether a write of it recorded `sequence` as applied. */
async function applyInTurn(tx: Tx, row: OperationRow, update: ProviderUpdate, sequence: number, peers: Peers, log: Logger): Promise<boolean> {
  const event = EVENTS[update.status];
  if (!event) {
    log.warn({ operation_id: row.id, status: update.status }, "provider update with no known status; dropped");
    return false;
  }
  // Routing refuses a completion without a bookable amount, so such an update can only be a stray
  // one: it could never apply, and retrying it would only hold up the operation's later updates.
  const actualAmount = (update.actualAmount && capturedAmount(update.actualAmount, row.currency)) || undefined;
  if (update.status === "completed" && !actualAmount) {
    log.error({ alert: "provider_update_unusable_amount", operation_id: row.id, status: update.status, amount: update.actualAmount }, "provider completion with no amount to book; dropped");
    return false;
  }
  const result = await applyTransition(tx, row, event, { actualAmount, providerEvidence: update.evidence, providerUpdatesApplied: sequence }, peers, log);
  if (!("refused" in result)) return true;
  if (update.status === "completed" && endsUncaptured(row.status as Status)) {
    await recordLateFunds(tx, row, actualAmount, log);
    return false;
  }
  if (update.status === "completed" && AWAITING_DECISION.has(row.status as Status)) {
    await updateOperation(tx, row.id, { providerReportedAmount: actualAmount, providerUpdatesApplied: sequence });
    log.info({ operation_id: row.id, status: row.status, amount: actualAmount }, "provider reports the money arrived; kept for the review that decides");
    return true;
  }
  if (update.status === "completed" && row.status === "completed" && actualAmount && !row.actualAmount.eq(actualAmount)) {
    // The booking stands (terminal); someone must reconcile the difference with the provider.
    log.error(
      { alert: "provider_amount_mismatch", operation_id: row.id, booked: formatAmount(row.actualAmount, row.currency as Currency), reported: actualAmount },
      "provider reports another amount than the one booked for this completed operation; reconcile",
    );
    return false;
  }
  if (update.status !== "completed" && AWAITING_DECISION.has(row.status as Status)) {
    // The review decides; the reviewer learns what arrived by asking the provider.
    log.warn({ alert: "provider_ended_under_review", operation_id: row.id, status: row.status, update: update.status }, "provider ended an operation a review still decides");
    return false;
  }
  log.info({ operation_id: row.id, status: row.status, update: update.status }, "provider update does not apply; dropped");
  return false;
}
