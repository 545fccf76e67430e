import type { ConnectRouter } from "@connectrpc/connect";
import { only, reads, serviceAccess } from "@pgw/kit/rpc";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { adjustHandlers } from "./handlers/adjust";
import { balancesHandlers } from "./handlers/balances";
import type { LedgerDeps } from "./handlers/deps";
import { quoteHandlers } from "./handlers/quote";
import { reconcileHandlers } from "./handlers/reconcile";
import { reserveHandlers } from "./handlers/reserves";
import { shopPostingsHandlers } from "./handlers/shop-postings";

/** The services registered here and who may call each method (docs/architecture.md, Who may call what). */
export const ACCESS = [
  serviceAccess(LedgerService, {
    getBalances: reads("gateway"),
    quote: reads("operations"),
    reserve: only("operations"),
    releaseReserve: only("operations"),
    adjust: only("gateway"),
    // Nothing calls it on its own: an operator's or internal team's check (it only logs what it finds).
    reconcile: reads(),
    listShopPostings: reads("gateway"),
  }),
];

/** Registers the ledger's gRPC handlers; the same routes run on a port or in memory. */
export function routes(deps: LedgerDeps) {
  return (router: ConnectRouter) => {
    router.service(LedgerService, {
      ...balancesHandlers(deps),
      ...quoteHandlers(deps),
      ...reserveHandlers(deps),
      ...adjustHandlers(deps),
      ...reconcileHandlers(deps),
      ...shopPostingsHandlers(deps),
    });
  };
}
