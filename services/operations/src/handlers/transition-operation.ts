import { AppError, parseRequestAmount, formatRequestAmount, type Logger } from "@pgw/kit";
import { endsUncaptured, transition, UNCAPTURED_FIGURES, type LifecycleEvent, type Refusal, type Status } from "../domain/lifecycle";
import { enqueueStatusChanged } from "../events";
import type { Peers } from "../peers";
import { updateOperation, type OperationRow, type Tx } from "../store";
import { lateFundsOnUncapturedEnd } from "./reported-funds";

export interface TransitionFacts {
  /** Captured amount on completion; the expected amount when the source does not say. */
  actualAmount?: string;
  manualCheckReason?: string;
}

/**
 * Applies a lifecycle event to a row locked in `tx`: the new status, and on completion the
 * captured amount with commission and settlement settled to it by the ledger's Quote (the same
 * figures the ledger then posts); on any other terminal status both settle to zero. Enqueues the
 * status event. Answers the refusal instead when the event does not apply.
 */
export async function applyTransition(
  tx: Tx,
  row: OperationRow,
  event: LifecycleEvent,
  facts: TransitionFacts,
  peers: Peers,
  log: Logger,
): Promise<{ row: OperationRow } | { refused: Refusal }> {
  const next = transition(row.status as Status, event);
  if ("refused" in next) return next;
  let money = {};
  if (endsUncaptured(next.to)) money = UNCAPTURED_FIGURES;
  if (next.to === "completed") {
    const parsed = facts.actualAmount === undefined ? row.expectedAmount : parseRequestAmount(facts.actualAmount);
    if (!parsed) throw new AppError("validation_error", "actual_amount must be a positive decimal with at most 2 places", [{ field: "actual_amount", issue: "must be a positive decimal string" }]);
    const actual = formatRequestAmount(parsed);
    const quote = await peers.ledger.quote({
      shopId: row.shopId,
      type: row.type,
      method: row.method,
      amount: actual,
      currency: row.currency,
      settlementCurrency: row.settlementCurrency ?? row.currency,
      fxRate: row.fxRate?.toFixed(),
    });
    money = {
      actualAmount: actual,
      recordedAmount: quote.recordedAmount,
      recordedCurrency: quote.settlementCurrency,
      settlementAmount: quote.settlementAmount,
      commissionAmount: quote.commissionAmount,
      settlementCurrency: quote.settlementCurrency,
    };
  }
  const manualCheckReason = next.to === "manual_check" ? (facts.manualCheckReason ?? "potential_fake") : null;
  const updated = await updateOperation(tx, row.id, { status: next.to, manualCheckReason, ...money });
  await enqueueStatusChanged(tx, updated, row.status);
  await lateFundsOnUncapturedEnd(tx, updated, log);
  return { row: updated };
}
