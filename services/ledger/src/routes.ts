import type { ConnectRouter } from "@connectrpc/connect";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { balancesHandlers } from "./handlers/balances";
import type { Db } from "./store";

/** Fully qualified names of the services registered here (for grpc.health.v1). */
export const SERVICE_NAMES = [LedgerService.typeName];

/** Registers the ledger's gRPC handlers; the same routes run on a port or in memory. */
export function routes(db: Db) {
  return (router: ConnectRouter) => {
    router.service(LedgerService, { ...balancesHandlers(db) });
  };
}
