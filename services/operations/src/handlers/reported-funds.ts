/**
 * Money a provider reported that no operation captured. Arriving for an operation that ended
 * without it (cancelled, declined, expired), it can never complete it, so someone must return it:
 * it is recorded as late funds (the admin queue) and alerted. Arriving while a receipt review or a
 * manual check decides the outcome, it is kept on the operation (`providerReportedAmount`); if the
 * operation then ends without capturing it, it becomes late funds the same way.
 */
import { formatAmount, type Currency } from "@pgw/contracts";
import { type Logger } from "@pgw/kit/runtime";
import { endsUncaptured, type Status } from "../domain/lifecycle";
import { countLateFundsOpened } from "../metrics";
import { insertLateFunds, type OperationRow, type Tx } from "../store";

/**
 * Records `amount` as late funds of `row` (once per operation) with a `late_funds` alert; a report
 * that named no amount is alerted all the same, with nothing to record.
 */
export async function recordLateFunds(tx: Tx, row: OperationRow, amount: string | undefined, log: Logger): Promise<void> {
  const recorded = amount ? await insertLateFunds(tx, row, amount) : false;
  if (recorded) countLateFundsOpened(tx, row);
  log.error({ alert: "late_funds", operation_id: row.id, status: row.status, amount, recorded }, "money reported for an operation that ended without it; recorded as late funds");
}

/** After a transition: an operation that ended uncaptured with money reported on it records that money. */
export async function lateFundsOnUncapturedEnd(tx: Tx, updated: OperationRow, log: Logger): Promise<void> {
  if (updated.providerReportedAmount && endsUncaptured(updated.status as Status)) {
    await recordLateFunds(tx, updated, formatAmount(updated.providerReportedAmount, updated.currency as Currency), log);
  }
}
