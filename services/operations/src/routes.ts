import type { ConnectRouter } from "@connectrpc/connect";
import { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { accountsHandlers, type AccountsDeps } from "./handlers/accounts";
import { operationsHandlers, type OperationsDeps } from "./handlers/operations";
import { operatorsHandlers } from "./handlers/operators";

/** Fully qualified names of the services registered here (for grpc.health.v1). */
export const SERVICE_NAMES = [AccountsService.typeName, OperationsService.typeName];

/** Registers the operations unit's gRPC handlers; the same routes run on a port or in memory. */
export function routes(deps: AccountsDeps & OperationsDeps) {
  return (router: ConnectRouter) => {
    router.service(AccountsService, { ...accountsHandlers(deps), ...operatorsHandlers(deps) });
    router.service(OperationsService, operationsHandlers(deps));
  };
}
