import type { ConnectRouter } from "@connectrpc/connect";
import { only, reads, serviceAccess } from "@pgw/kit/rpc";
import { ReceiptsService } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import type { ReceiptsDeps } from "./handlers/deps";
import { getEvidence, getReceiptFile } from "./handlers/evidence";
import { listConfirmations } from "./handlers/list-confirmations";
import { uploadConfirmation } from "./handlers/upload-confirmation";

/** The services registered here and who may call each method (docs/architecture.md, Who may call what). */
export const ACCESS = [
  serviceAccess(ReceiptsService, {
    uploadConfirmation: only("gateway"),
    getEvidence: reads("gateway", "notifier"),
    listConfirmations: reads("gateway"),
    // A payer's file.
    getReceiptFile: only("gateway"),
  }),
];

/** Registers the receipts unit's gRPC handlers; the same routes run on a port or in memory. */
export function routes(deps: ReceiptsDeps) {
  return (router: ConnectRouter) => {
    router.service(ReceiptsService, {
      async uploadConfirmation(req, ctx) {
        return { operation: await uploadConfirmation(deps, req, ctx.signal) };
      },
      getEvidence: (req) => getEvidence(deps, req.operationId, req.completed),
      getReceiptFile: (req) => getReceiptFile(deps, req),
      listConfirmations: (req) => listConfirmations(deps, req.operationId),
    });
  };
}
