/**
 * The order a provider's updates of one operation are applied in. Routing numbers them 1, 2, … as it
 * applies them under its lock on the allocation; the stream may carry them in another order (two
 * routing relays) and two operations replicas may take two of them at once. Applied the other way
 * round, an expiry followed by money after all would complete the operation instead of leaving it
 * expired with late funds.
 */

/**
 * How long an update waits for the one before it, counted from when the stream stored it. The
 * earlier one is normally a relay pass behind (a routing replica leaves its rows to another for
 * 2 s), or being retried after a failure (the consumer's backoff reaches a minute); past this it
 * is taken as lost, and the later one is applied without it. Long, because applying out of order
 * can book money wrongly, while waiting only delays a status.
 */
export const EARLIER_UPDATE_WAIT_MS = 120_000;

/** How soon an update that waits is looked at again. */
export const WAITING_UPDATE_RETRY_MS = 200;

/**
 * - `apply`: its turn (or not numbered: from a routing that did not number its updates);
 * - `wait`: an earlier update of the operation is still on its way;
 * - `apply_past_gap`: it waited its time, the earlier one never came: applied without it;
 * - `apply_late`: an update passed over by a later one's `apply_past_gap`, arriving after all.
 */
export type UpdateTurn = "apply" | "wait" | "apply_past_gap" | "apply_late";

/** The turn of update `sequence` when the operation has applied up to `applied` and the update has waited `waitedMs`. */
export function providerUpdateTurn(sequence: number, applied: number, waitedMs: number): UpdateTurn {
  if (sequence === 0 || sequence === applied + 1) return "apply";
  if (sequence <= applied) return "apply_late";
  return waitedMs < EARLIER_UPDATE_WAIT_MS ? "wait" : "apply_past_gap";
}
