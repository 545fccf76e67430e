import type { ConnectRouter } from "@connectrpc/connect";
import { NotifierService } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";

/** Fully qualified names of the services registered here (for grpc.health.v1). */
export const SERVICE_NAMES = [NotifierService.typeName];

/**
 * Registers the notifier unit's gRPC handlers. Secrets and the delivery log arrive with the webhooks issue.
 * Methods not implemented yet answer UNIMPLEMENTED.
 */
export function routes() {
  return (router: ConnectRouter) => {
    router.service(NotifierService, {});
  };
}
