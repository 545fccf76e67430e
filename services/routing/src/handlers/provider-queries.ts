/** CheckFunds, GetEvidence, GetEvidenceFile: questions passed through to the allocation's provider. */
import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, requireUuid } from "@pgw/contracts";
import type { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import type { ProviderConnector, ProviderEndpoint } from "../connectors/connector";
import { ProviderError } from "../connectors/connector";
import { withTimeout } from "../connectors/http";
import { findAllocation } from "../store";
import { providerOf, type RoutingDeps } from "./deps";
import { requireText } from "./validate";

type Ask<T> = (connector: ProviderConnector, endpoint: ProviderEndpoint, reference: string, signal: AbortSignal) => Promise<T>;

/**
 * Asks the provider of the operation's allocation. No placed allocation → not_found; the provider
 * not knowing it → not_found; any other failure (5xx, timeout, unreadable) → unavailable.
 */
async function askProvider<T>(deps: RoutingDeps, operationIdRaw: string, what: string, ask: Ask<T>): Promise<T> {
  const operationId = requireUuid(operationIdRaw, "operation_id");
  const row = await findAllocation(deps.sql, operationId);
  if (!row?.provider || !row.providerReference) throw new AppError("not_found", "no allocation for this operation");
  const { endpoint, connector, timeoutMs } = providerOf(deps, row.provider);
  const reference = row.providerReference;
  try {
    return await withTimeout(timeoutMs, undefined, (signal) => ask(connector, endpoint, reference, signal));
  } catch (err) {
    deps.log.warn({ operationId, provider: row.provider.code, what, err }, "provider query failed");
    if (err instanceof ProviderError && err.failure === "not_found") throw new AppError("not_found", `${what} not found at the provider`, [], { cause: err });
    throw new AppError("unavailable", `${what} is not available from the provider`, [], { cause: err });
  }
}

export function providerQueryHandlers(deps: RoutingDeps): Pick<ServiceImpl<typeof RoutingService>, "checkFunds" | "getEvidence" | "getEvidenceFile"> {
  return {
    async checkFunds(req) {
      return askProvider(deps, req.operationId, "funds", (c, p, ref, signal) => c.checkFunds(p, ref, signal));
    },
    async getEvidence(req) {
      return { legs: await askProvider(deps, req.operationId, "evidence", (c, p, ref, signal) => c.getEvidence(p, ref, signal)) };
    },
    async getEvidenceFile(req) {
      const itemId = requireText(req.itemId, "item_id");
      // The file is fetched only for an item of this operation's own evidence.
      return askProvider(deps, req.operationId, "evidence file", async (c, p, ref, signal) => {
        const legs = await c.getEvidence(p, ref, signal);
        if (!legs.some((l) => l.items.some((i) => i.id === itemId))) throw new ProviderError("not_found", "item is not evidence of this operation");
        return c.getEvidenceFile(p, itemId, signal);
      });
    },
  };
}
