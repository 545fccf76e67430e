import type { ConnectRouter } from "@connectrpc/connect";
import { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import { allocateHandlers } from "./handlers/allocate";
import type { RoutingDeps } from "./handlers/deps";
import { fxHandlers } from "./handlers/fx";
import { listRoutesHandlers } from "./handlers/list-routes";
import { providerQueryHandlers } from "./handlers/provider-queries";
import { releaseHandlers } from "./handlers/release";

/** Fully qualified names of the services registered here (for grpc.health.v1). */
export const SERVICE_NAMES = [RoutingService.typeName];

/** Registers the routing unit's gRPC handlers; the same routes run on a port or in memory. */
export function routes(deps: RoutingDeps) {
  return (router: ConnectRouter) => {
    router.service(RoutingService, {
      ...fxHandlers(deps),
      ...allocateHandlers(deps),
      ...releaseHandlers(deps),
      ...providerQueryHandlers(deps),
      ...listRoutesHandlers(deps),
    });
  };
}
