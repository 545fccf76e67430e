/**
 * Unsettled placements. A provider create that timed out, or whose answer could not be read, may
 * still have been carried out: the provider then holds an operation no allocation tracks, a payout
 * it may pay out while no shop is charged, requisites it may take money on. The create moved on
 * (the next route, or no_provider_available with the key released), so each such create is checked
 * at its provider, by operation id, once its Allocate is over and then on a widening schedule, dense
 * at first (a late placement mostly lands within a minute, and the provider may pay it out soon):
 * - the provider holds nothing for it: looked at again (a slow provider may still place it), and
 *   `absent` once the schedule ends;
 * - what it holds is the operation's own allocation (a later attempt at that provider got the same
 *   placement back): `ours`;
 * - it ended there without money moving (declined, expired): `ended`;
 * - it is still open: cancelled there, `cancelled`;
 * - money moved (paid out, or taken from a payer): nobody booked it, so an error alert for people
 *   (`untracked_provider_operation_paid`), `paid`.
 * A provider that cannot be asked is asked again at the next check.
 */
import { runPeriodically, type Stoppable } from "@pgw/kit/runtime";
import type { FoundPlacement } from "../connectors/connector";
import { withTimeout } from "../connectors/http";
import { providerOf, type RoutingDeps } from "../handlers/deps";
import { cancelAtProvider } from "../handlers/release";
import { claimDueUnsettledPlacements, findAllocation, rescheduleUnsettledPlacement, settleUnsettledPlacement, type UnsettledPlacementRow } from "../store";

/** Waits after each check that found nothing to settle (about 6.5 h in all); then it is over. */
const RECHECK_AFTER_MS = [5_000, 5_000, 5_000, 5_000, 10_000, 10_000, 30_000, 30_000, 60_000, 120_000, 300_000, 600_000, 3_600_000, 21_600_000];
const PAGE = 20;
/** A pass's claim on its placements (a pass asks providers one after another, each call within its timeout). */
const CLAIM_MS = 300_000;

type Outcome = "absent" | "ours" | "ended" | "cancelled" | "paid";

/** What one check makes of a placement; null when it must be looked at again. */
async function check(deps: RoutingDeps, row: UnsettledPlacementRow, lastCheck: boolean): Promise<Outcome | null> {
  const ctx = { operationId: row.operationId, provider: row.provider.code, type: row.type };
  const { endpoint, connector, timeoutMs } = providerOf(deps, row.provider);
  let found: FoundPlacement | null;
  try {
    found = await withTimeout(timeoutMs, undefined, (signal) => connector.placedFor(endpoint, row.operationId, signal));
  } catch (err) {
    deps.log.warn({ ...ctx, err }, "unsettled placement: could not ask the provider; asking again later");
    return null;
  }
  if (!found) return lastCheck ? "absent" : null;
  const allocation = await findAllocation(deps.sql, row.operationId);
  if (allocation?.providerId === row.providerId && allocation.providerReference === found.reference) return "ours";
  const { report, reference } = found;
  if (report.status === "completed") {
    deps.log.error({ ...ctx, reference, amount: report.amount, alert: "untracked_provider_operation_paid" }, "a provider carried out an operation whose create had timed out, and money moved that nobody booked");
    return "paid";
  }
  if (report.status !== "open") return "ended";
  if (!(await cancelAtProvider(deps, row.provider, reference, row.operationId, "placed after its create timed out"))) return null; // tried again at the next check
  deps.log.warn({ ...ctx, reference, alert: "untracked_provider_operation_cancelled" }, "a provider had placed an operation whose create timed out; cancelled there");
  return "cancelled";
}

/** One pass over the due placements; resolves to how many it settled. */
export async function checkUnsettledPlacements(deps: RoutingDeps): Promise<number> {
  let settled = 0;
  for (const row of await claimDueUnsettledPlacements(deps.sql, PAGE, CLAIM_MS)) {
    const checks = row.checks + 1;
    const outcome = await check(deps, row, checks > RECHECK_AFTER_MS.length);
    if (outcome) {
      await settleUnsettledPlacement(deps.sql, row.id, checks, outcome);
      settled++;
    } else {
      await rescheduleUnsettledPlacement(deps.sql, row.id, checks, new Date(Date.now() + RECHECK_AFTER_MS[Math.min(checks, RECHECK_AFTER_MS.length) - 1]));
    }
  }
  return settled;
}

export function startUnsettledPlacementChecks(deps: RoutingDeps, everyMs: number): Stoppable {
  return runPeriodically(() => checkUnsettledPlacements(deps), everyMs, (err) => deps.log.warn({ err }, "unsettled placement checks failed; retrying at the next pass"));
}
