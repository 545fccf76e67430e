import type { ConnectRouter } from "@connectrpc/connect";
import { ReceiptsService } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";

/** Fully qualified names of the services registered here (for grpc.health.v1). */
export const SERVICE_NAMES = [ReceiptsService.typeName];

/**
 * Registers the receipts unit's gRPC handlers. Uploads, review and evidence arrive with the receipts issue.
 * Methods not implemented yet answer UNIMPLEMENTED.
 */
export function routes() {
  return (router: ConnectRouter) => {
    router.service(ReceiptsService, {});
  };
}
