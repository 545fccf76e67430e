/**
 * A provider fact routing learnt by asking (no callback carried it) is reported as its callback
 * would have been: the allocation takes the provider's status and one provider update is
 * published, in one transaction. Both askers (reconciliation of overdue callbacks, the funds check
 * after a cancel) go through here. Such an update carries no evidence legs: receipts and the
 * notifier ask for them, as for any completion without.
 */
import { continuingTrace } from "@pgw/kit/runtime";
import type { ProviderStatus } from "../domain/allocation";
import { bookableAmount } from "../domain/callback";
import { providerUpdateEvent } from "../events";
import { lockAllocationByReference, setAllocationStatus } from "../store";
import type { RoutingDeps } from "./deps";

/**
 * Reports `status` (and a completion's `amount`) for the placement `reference` at `providerId`, if
 * its allocation is still `expected`: `changed` when it is not (a callback told us first),
 * `unbookable` when a completion reports no amount its currency can book (nothing is reported).
 */
export function reportAskedStatus(
  deps: RoutingDeps,
  placement: { providerId: string; reference: string; expected: "active" | "released" },
  status: ProviderStatus,
  amount: string | undefined,
): Promise<"reported" | "changed" | "unbookable"> {
  return deps.sql.$transaction(async (tx) => {
    const allocation = await lockAllocationByReference(tx, placement.providerId, placement.reference);
    if (allocation?.status !== placement.expected) return "changed";
    const actualAmount = bookableAmount(status, amount, allocation.currency ?? "");
    if (actualAmount === null) return "unbookable";
    // As a callback's: the fact joins the trace of the Allocate that placed the operation.
    return continuingTrace(allocation.traceparent, "provider status asked", { attributes: { "pgw.provider.status": status } }, async () => {
      const facts = { operationId: allocation.operationId, status, actualAmount, occurredAt: new Date().toISOString() };
      await setAllocationStatus(tx, allocation, status, (sequence) => providerUpdateEvent({ ...facts, sequence }));
      return "reported" as const;
    });
  });
}
