/**
 * CheckFunds, GetEvidence, GetEvidenceFile: questions passed through to the allocation's provider;
 * and the evidence a completion's provider update carries, asked the same way.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, requireUuid } from "@pgw/contracts";
import type { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import type { EvidenceLegFacts, ProviderConnector, ProviderEndpoint } from "../connectors/connector";
import { ProviderError } from "../connectors/connector";
import { withTimeout } from "../connectors/http";
import { findAllocation, type ProviderRow } from "../store";
import { providerOf, type RoutingDeps } from "./deps";
import { requireText } from "./validate";

type Ask<T> = (connector: ProviderConnector, endpoint: ProviderEndpoint, reference: string, signal: AbortSignal) => Promise<T>;

/** The evidence legs of a placement, as the provider reports them. */
const askEvidence: Ask<EvidenceLegFacts[]> = (c, p, ref, signal) => c.getEvidence(p, ref, signal);

/**
 * Asks `provider` about its placement `reference`, within the provider's timeout or `limitMs` when
 * that is shorter. The provider not knowing it → not_found; any other failure (5xx, timeout,
 * unreadable) → unavailable.
 */
async function askPlacement<T>(deps: RoutingDeps, provider: ProviderRow, reference: string, query: { operationId: string; what: string; limitMs?: number }, ask: Ask<T>): Promise<T> {
  const { endpoint, connector, timeoutMs } = providerOf(deps, provider);
  const { operationId, what } = query;
  try {
    return await withTimeout(Math.min(timeoutMs, query.limitMs ?? timeoutMs), undefined, (signal) => ask(connector, endpoint, reference, signal));
  } catch (err) {
    deps.log.warn({ operationId, provider: provider.code, what, err }, "provider query failed");
    if (err instanceof ProviderError && err.failure === "not_found") throw new AppError("not_found", `${what} not found at the provider`, [], { cause: err });
    throw new AppError("unavailable", `${what} is not available from the provider`, [], { cause: err });
  }
}

/** Asks the provider of the operation's allocation (see askPlacement). No placed allocation → not_found. */
async function askProvider<T>(deps: RoutingDeps, operationIdRaw: string, what: string, ask: Ask<T>): Promise<T> {
  const operationId = requireUuid(operationIdRaw, "operation_id");
  const row = await findAllocation(deps.sql, operationId);
  if (!row?.provider || !row.providerReference) throw new AppError("not_found", "no allocation for this operation");
  return askPlacement(deps, row.provider, row.providerReference, { operationId, what }, ask);
}

/**
 * The evidence legs of a placement its provider has just reported completed, asked as GetEvidence
 * asks them but within `deps.completionEvidenceMs`, for the provider update to carry (so receipts
 * and the notifier need not ask). Undefined when they cannot be had then, or asking is off (0):
 * the update goes out without them, never later for their sake.
 */
export async function evidenceAtCompletion(deps: RoutingDeps, provider: ProviderRow, reference: string, operationId: string): Promise<EvidenceLegFacts[] | undefined> {
  if (deps.completionEvidenceMs === 0) return undefined;
  try {
    return await askPlacement(deps, provider, reference, { operationId, what: "evidence at completion", limitMs: deps.completionEvidenceMs }, askEvidence);
  } catch {
    return undefined; // logged by askPlacement
  }
}

export function providerQueryHandlers(deps: RoutingDeps): Pick<ServiceImpl<typeof RoutingService>, "checkFunds" | "getEvidence" | "getEvidenceFile"> {
  return {
    async checkFunds(req) {
      return askProvider(deps, req.operationId, "funds", (c, p, ref, signal) => c.checkFunds(p, ref, signal));
    },
    async getEvidence(req) {
      return { legs: await askProvider(deps, req.operationId, "evidence", askEvidence) };
    },
    async getEvidenceFile(req) {
      const itemId = requireText(req.itemId, "item_id");
      // The file is fetched only for an item of this operation's own evidence.
      return askProvider(deps, req.operationId, "evidence file", async (c, p, ref, signal) => {
        const legs = await askEvidence(c, p, ref, signal);
        if (!legs.some((l) => l.items.some((i) => i.id === itemId))) throw new ProviderError("not_found", "item is not evidence of this operation");
        return c.getEvidenceFile(p, itemId, signal);
      });
    },
  };
}
