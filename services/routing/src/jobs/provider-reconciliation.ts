/**
 * Provider reconciliation: an allocation still active long after it was placed (or last asked
 * about) may have a callback that never arrived: routing was down while the provider gave up
 * retrying, or the provider lost it. Every `everyMs` such allocations are asked about at their
 * provider; a finished one is reported exactly as its callback would have been (one provider
 * update, the allocation takes the provider's status), so the operation completes, is declined
 * or expires instead of staying pending for good. One still open waits another `ageMs`.
 */
import { type KitLog } from "@pgw/kit/events";
import { runPeriodically, type Stoppable } from "@pgw/kit/runtime";
import type { ProviderStatusReport } from "../connectors/connector";
import { withTimeout } from "../connectors/http";
import { reportAskedStatus } from "../handlers/asked-status";
import { providerOf, type RoutingDeps } from "../handlers/deps";
import { staleActiveAllocations, touchActiveAllocation } from "../store";

const PAGE = 100;

export interface ProviderReconciliationOptions {
  everyMs: number;
  ageMs: number;
}

/** One pass; resolves to how many finished operations it reported. */
export async function reconcileWithProviders(deps: RoutingDeps, ageMs: number, log: KitLog): Promise<number> {
  let reported = 0;
  for (const allocation of await staleActiveAllocations(deps.sql, new Date(Date.now() - ageMs), PAGE)) {
    const ctx = { operationId: allocation.operationId, provider: allocation.provider?.code, reference: allocation.providerReference };
    let found: ProviderStatusReport;
    try {
      const { endpoint, connector, timeoutMs } = providerOf(deps, allocation.provider!);
      const reference = allocation.providerReference!;
      found = await withTimeout(timeoutMs, undefined, (signal) => connector.status(endpoint, reference, signal));
    } catch (err) {
      log.warn({ ...ctx, err }, "provider reconciliation: could not ask the provider; asking again next pass");
      continue;
    }
    if (found.status === "open") {
      await touchActiveAllocation(deps.sql, allocation.id);
      continue;
    }
    const placement = { providerId: allocation.providerId!, reference: allocation.providerReference!, expected: "active" as const };
    const outcome = await reportAskedStatus(deps, placement, found.status, found.amount);
    if (outcome === "unbookable") {
      // As a callback's would be: refused, never booked at the requested amount; asked again later.
      log.error({ ...ctx, amount: found.amount, alert: "provider_status_unusable" }, "provider reconciliation: a completion with no amount to book; not reported");
      await touchActiveAllocation(deps.sql, allocation.id);
    }
    if (outcome === "reported") {
      reported++;
      log.warn({ ...ctx, status: found.status, alert: "provider_callback_missing" }, "provider reconciliation: the provider had finished the operation without a callback reaching us; reported");
    }
  }
  return reported;
}

export function startProviderReconciliation(deps: RoutingDeps, opts: ProviderReconciliationOptions): Stoppable {
  return runPeriodically(() => reconcileWithProviders(deps, opts.ageMs, deps.log), opts.everyMs, (err) => deps.log.warn({ err }, "provider reconciliation pass failed; retrying at the next pass"));
}
