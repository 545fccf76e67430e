import { capturedAmount, CURRENCY_SCALE, fieldError, isCurrency } from "@pgw/contracts";
import { type Logger } from "@pgw/kit/runtime";
import type { ProviderEvidence } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { completionFigures } from "../domain/completion-figures";
import { endsUncaptured, transition, UNCAPTURED_FIGURES, type LifecycleEvent, type Refusal, type Status } from "../domain/lifecycle";
import { writeStatusChange } from "../events";
import type { Peers } from "../connectors/peers";
import type { OperationRow, Tx } from "../store";
import { lateFundsOnUncapturedEnd } from "./reported-funds";

export interface TransitionFacts {
  /**
   * Captured amount on completion, as the money's source (provider, review, admin) reported it; a
   * completion without one is refused, never booked at the expected amount.
   */
  actualAmount?: string;
  manualCheckReason?: string;
  /**
   * The provider's evidence legs of a completion it reported, as its update carried them: handed on
   * in the status event so receipts and the notifier need not ask. Absent for a completion a review
   * or an admin decided, or when the update had none.
   */
  providerEvidence?: ProviderEvidence;
  /** The provider update this change applies (its sequence), recorded by the same statement. */
  providerUpdatesApplied?: number;
}

/** Why `reported` cannot be booked as the captured amount of an operation in `currency`. */
function actualAmountIssue(reported: string | undefined, currency: string): string {
  if (!reported) return "is required: a completion books the amount that arrived";
  const places = isCurrency(currency) ? CURRENCY_SCALE[currency] : 2;
  return `must be a positive decimal string with at most ${places} decimal places (${currency})`;
}

/**
 * Applies a lifecycle event to a row locked in `tx`: the new status, and on completion the
 * captured amount (at its currency's scale) with commission and settlement settled to it with the
 * tariff the create was quoted with (the figures the ledger then posts); on any other terminal
 * status both settle to zero. Enqueues the status event (with a completion's provider evidence,
 * when given). Answers the refusal instead when the event does not apply.
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
    const actual = capturedAmount(facts.actualAmount ?? "", row.currency);
    if (!actual) throw fieldError("actual_amount", actualAmountIssue(facts.actualAmount, row.currency));
    // Only a row created before operations stored the create's tariff asks the ledger, under the row lock.
    const quote =
      completionFigures(row, actual) ??
      (await peers.ledger.quote({
        shopId: row.shopId,
        type: row.type,
        method: row.method,
        amount: actual,
        currency: row.currency,
        settlementCurrency: row.settlementCurrency ?? row.currency,
        fxRate: row.fxRate?.toFixed(),
      }));
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
  const change = { status: next.to, manualCheckReason, providerUpdatesApplied: facts.providerUpdatesApplied, ...money };
  const updated = await writeStatusChange(tx, row, change, next.to === "completed" ? facts.providerEvidence : undefined);
  await lateFundsOnUncapturedEnd(tx, updated, log);
  return { row: updated };
}
