import type { ConnectRouter } from "@connectrpc/connect";
import { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";

/** Fully qualified names of the services registered here (for grpc.health.v1). */
export const SERVICE_NAMES = [RoutingService.typeName];

/**
 * Registers the routing unit's gRPC handlers. Allocation, release and provider evidence arrive with the payments issue.
 * Methods not implemented yet answer UNIMPLEMENTED.
 */
export function routes() {
  return (router: ConnectRouter) => {
    router.service(RoutingService, {});
  };
}
