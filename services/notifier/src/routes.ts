import type { ConnectRouter } from "@connectrpc/connect";
import { NotifierService } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";
import { deliveryHandlers } from "./handlers/deliveries";
import type { NotifierDeps } from "./handlers/deps";
import { secretHandlers } from "./handlers/secrets";

/** Fully qualified names of the services registered here (for grpc.health.v1). */
export const SERVICE_NAMES = [NotifierService.typeName];

/** Registers the notifier's gRPC handlers; the same routes run on a port or in memory. */
export function routes(deps: NotifierDeps) {
  return (router: ConnectRouter) => {
    router.service(NotifierService, {
      ...secretHandlers(deps),
      ...deliveryHandlers(deps),
    });
  };
}
