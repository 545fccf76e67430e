/**
 * A provider fact routing learnt by asking (no callback carried it) is reported as its callback
 * would have been: the allocation takes the provider's status and one provider update is
 * published, in one transaction. Both askers (reconciliation of overdue callbacks, the funds check
 * after a cancel) go through here.
 */
import type { ProviderStatus } from "../domain/allocation";
import { enqueueProviderUpdate } from "../events";
import { lockAllocationByReference, setAllocationStatus } from "../store";
import type { RoutingDeps } from "./deps";

/**
 * Reports `status` (and a completion's `amount`) for the placement `reference` at `providerId`,
 * if its allocation is still `expected`; false when it changed meanwhile (a callback told us first).
 */
export function reportAskedStatus(
  deps: RoutingDeps,
  placement: { providerId: string; reference: string; expected: "active" | "released" },
  status: ProviderStatus,
  amount: string | undefined,
): Promise<boolean> {
  return deps.sql.$transaction(async (tx) => {
    const allocation = await lockAllocationByReference(tx, placement.providerId, placement.reference);
    if (allocation?.status !== placement.expected) return false;
    await setAllocationStatus(tx, allocation.id, status);
    await enqueueProviderUpdate(tx, { operationId: allocation.operationId, status, actualAmount: amount, occurredAt: new Date().toISOString() });
    return true;
  });
}
