import type { ConnectRouter } from "@connectrpc/connect";
import { only, reads, serviceAccess } from "@pgw/kit/rpc";
import { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { accountsHandlers } from "./handlers/accounts";
import type { Deps } from "./handlers/deps";
import { operationsHandlers } from "./handlers/operations";
import { operatorsHandlers } from "./handlers/operators";

/** The services registered here and who may call each method (docs/architecture.md, Who may call what). */
export const ACCESS = [
  serviceAccess(AccountsService, {
    createMerchant: only("gateway"),
    createShop: only("gateway"),
    updateShop: only("gateway"),
    getShop: reads("gateway"),
    listMerchants: reads("gateway"),
    listShops: reads("gateway"),
    // Answer with a new secret, or tell whether a presented one is valid.
    issueApiKey: only("gateway"),
    revokeApiKey: only("gateway"),
    listApiKeys: reads("gateway"),
    resolveApiKey: only("gateway"),
    createOperator: only("gateway"),
    listOperators: reads("gateway"),
    rotateOperatorToken: only("gateway"),
    revokeOperator: only("gateway"),
    resolveOperator: only("gateway"),
  }),
  serviceAccess(OperationsService, {
    createOperation: only("gateway"),
    getOperationState: reads("gateway", "ledger", "receipts", "notifier"),
    cancelOperation: only("gateway"),
    applyReviewOutcome: only("receipts"),
    resolveManualCheck: only("gateway"),
    listOperations: reads("gateway"),
    getOperationHistory: reads("gateway"),
    listBanks: reads("gateway"),
    getCheckout: reads("gateway", "receipts"),
    listStatusEvents: reads("ledger", "receipts", "notifier"),
    listLateFunds: reads("gateway"),
    resolveLateFunds: only("gateway"),
  }),
];

/** Registers the operations unit's gRPC handlers; the same routes run on a port or in memory. */
export function routes(deps: Deps) {
  return (router: ConnectRouter) => {
    router.service(AccountsService, { ...accountsHandlers(deps), ...operatorsHandlers(deps) });
    router.service(OperationsService, operationsHandlers(deps));
  };
}
