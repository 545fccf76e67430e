/** ListRoutes: every configured route (wire mapping of the `routes` rows). */
import type { ServiceImpl } from "@connectrpc/connect";
import type { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import type { Route } from "../generated/prisma/client";
import { listRoutes } from "../store";
import type { RoutingDeps } from "./deps";

const routeWire = (r: Route) => ({
  id: r.id,
  providerId: r.providerId,
  type: r.type,
  method: r.method,
  currency: r.currency,
  settlementCurrency: r.settlementCurrency,
  priority: r.priority,
  minAmount: r.minAmount.toFixed(2),
  maxAmount: r.maxAmount.toFixed(2),
  requiresReceipt: r.requiresReceipt,
  autoConversion: r.autoConversion,
  enabled: r.enabled,
});

export function listRoutesHandlers(deps: RoutingDeps): Pick<ServiceImpl<typeof RoutingService>, "listRoutes"> {
  return {
    async listRoutes() {
      return { routes: (await listRoutes(deps.db)).map(routeWire) };
    },
  };
}
