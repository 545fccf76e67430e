import type { ConnectRouter } from "@connectrpc/connect";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { adjustHandlers } from "./handlers/adjust";
import { balancesHandlers } from "./handlers/balances";
import type { LedgerDeps } from "./handlers/deps";
import { quoteHandlers } from "./handlers/quote";
import { reconcileHandlers } from "./handlers/reconcile";
import { reserveHandlers } from "./handlers/reserves";

/** Fully qualified names of the services registered here (for grpc.health.v1). */
export const SERVICE_NAMES = [LedgerService.typeName];

/** Registers the ledger's gRPC handlers; the same routes run on a port or in memory. */
export function routes(deps: LedgerDeps) {
  return (router: ConnectRouter) => {
    router.service(LedgerService, {
      ...balancesHandlers(deps),
      ...quoteHandlers(deps),
      ...reserveHandlers(deps),
      ...adjustHandlers(deps),
      ...reconcileHandlers(deps),
    });
  };
}
