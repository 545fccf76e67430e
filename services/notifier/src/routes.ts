import type { ConnectRouter } from "@connectrpc/connect";
import { only, reads, serviceAccess } from "@pgw/kit/rpc";
import { NotifierService } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";
import { deliveryHandlers } from "./handlers/deliveries";
import type { NotifierDeps } from "./handlers/deps";
import { secretHandlers } from "./handlers/secrets";

/** The services registered here and who may call each method (docs/architecture.md, Who may call what). */
export const ACCESS = [
  serviceAccess(NotifierService, {
    // Answers with the new signing secret.
    rotateSecret: only("gateway"),
    listDeliveries: reads("gateway"),
    redeliver: only("gateway"),
  }),
];

/** Registers the notifier's gRPC handlers; the same routes run on a port or in memory. */
export function routes(deps: NotifierDeps) {
  return (router: ConnectRouter) => {
    router.service(NotifierService, {
      ...secretHandlers(deps),
      ...deliveryHandlers(deps),
    });
  };
}
