import type { ConnectRouter } from "@connectrpc/connect";
import { only, reads, serviceAccess } from "@pgw/kit/rpc";
import { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import { allocateHandlers } from "./handlers/allocate";
import type { RoutingDeps } from "./handlers/deps";
import { fxHandlers } from "./handlers/fx";
import { listRoutesHandlers } from "./handlers/list-routes";
import { providerQueryHandlers } from "./handlers/provider-queries";
import { releaseHandlers } from "./handlers/release";

/** The services registered here and who may call each method (docs/architecture.md, Who may call what). */
export const ACCESS = [
  serviceAccess(RoutingService, {
    quoteFx: reads("operations"),
    // Answers with the requisites a payer pays to.
    allocate: only("operations"),
    checkRoutable: reads("operations"),
    release: only("operations"),
    getEvidence: reads("receipts"),
    // A provider's receipt file (a payer's data), and a live question to the provider.
    getEvidenceFile: only("receipts"),
    checkFunds: only("receipts"),
    listRoutes: reads("gateway"),
  }),
];

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
