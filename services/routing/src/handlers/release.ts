/** Release: give an operation's allocation back (cancel at the provider) or leave a tombstone. */
import { AppError, requireUuid } from "@pgw/contracts";
import type { ServiceImpl } from "@connectrpc/connect";
import type { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import { withTimeout } from "../connectors/http";
import { releaseAction } from "../domain/allocation";
import { findAllocation, insertTombstone, markReleased, type ProviderRow } from "../store";
import { reportAskedStatus } from "./asked-status";
import { providerOf, type RoutingDeps } from "./deps";

/** Cancels an operation at its provider, best effort: a failure is logged, never thrown; resolves to whether the cancel went through. */
export async function cancelAtProvider(deps: RoutingDeps, provider: ProviderRow, reference: string, operationId: string, why: string): Promise<boolean> {
  const started = Date.now();
  try {
    const { endpoint, connector, timeoutMs } = providerOf(deps, provider);
    await withTimeout(timeoutMs, undefined, (signal) => connector.cancel(endpoint, reference, signal));
    deps.log.info({ operationId, provider: provider.code, reference, why, ms: Date.now() - started }, "cancelled at provider");
    return true;
  } catch (err) {
    deps.log.warn({ operationId, provider: provider.code, reference, why, ms: Date.now() - started, err }, "cancel at provider failed");
    return false;
  }
}

/**
 * After cancelling a released payment's placement: asks the provider whether the payer's money
 * had already arrived (a cancel does not undo a payment made before it, and its callback may be
 * lost). Money that did is reported as the provider's `completed` update, as a callback would
 * have, unless a callback already did; operations records it as late funds. Best effort, logged.
 * Payouts are skipped: no payer's money comes in for them.
 */
export async function reportFundsTakenBeforeCancel(deps: RoutingDeps, provider: ProviderRow, reference: string, operationId: string, type: string | null): Promise<void> {
  if (type !== "payment") return;
  try {
    const { endpoint, connector, timeoutMs } = providerOf(deps, provider);
    const funds = await withTimeout(timeoutMs, undefined, (signal) => connector.checkFunds(endpoint, reference, signal));
    if (funds.state !== "arrived" || !funds.amount) return;
    const outcome = await reportAskedStatus(deps, { providerId: provider.id, reference, expected: "released" }, "completed", funds.amount);
    if (outcome === "reported") deps.log.warn({ operationId, provider: provider.code, reference, amount: funds.amount }, "the provider took the payer's money before the cancel; reported");
    if (outcome === "unbookable") {
      deps.log.error({ operationId, provider: provider.code, reference, amount: funds.amount, alert: "provider_status_unusable" }, "the provider took the payer's money before the cancel but names no amount its currency holds; not reported");
    }
  } catch (err) {
    deps.log.warn({ operationId, provider: provider.code, reference, err }, "could not ask the provider whether money arrived before the cancel");
  }
}

/**
 * Releases the operation's allocation. Active: marked released, then cancelled at the provider.
 * None yet: a `released` tombstone, which an Allocate finishing later finds (it cancels what it
 * placed and answers invalid_state). Already released: nothing. Completed, declined, expired:
 * nothing, and false. Safe to repeat and to race with Allocate (the operation_id is unique).
 */
export async function releaseAllocation(deps: RoutingDeps, operationId: string, reason: string): Promise<boolean> {
  const why = reason.trim() || "cancel";
  for (let attempt = 0; attempt < 5; attempt++) {
    const row = await findAllocation(deps.sql, operationId);
    switch (releaseAction(row?.status)) {
      case "tombstone":
        if (await insertTombstone(deps.sql, operationId, why)) {
          deps.log.info({ operationId, reason: why }, "released before allocation (tombstone)");
          return true;
        }
        continue; // an Allocate (or another Release) inserted first: look again
      case "release":
        if (!(await markReleased(deps.sql, operationId, why))) continue;
        deps.log.info({ operationId, reason: why }, "allocation released");
        if (row?.provider && row.providerReference) {
          await cancelAtProvider(deps, row.provider, row.providerReference, operationId, why);
          await reportFundsTakenBeforeCancel(deps, row.provider, row.providerReference, operationId, row.type);
        }
        return true;
      case "already_released":
        return true;
      case "terminal":
        return false;
    }
  }
  throw new AppError("unavailable", "allocation is changing; retry", [], { cause: new Error(`release of ${operationId} kept racing`) });
}

export function releaseHandlers(deps: RoutingDeps): Pick<ServiceImpl<typeof RoutingService>, "release"> {
  return {
    async release(req) {
      const operationId = requireUuid(req.operationId, "operation_id");
      return { released: await releaseAllocation(deps, operationId, req.reason) };
    },
  };
}
