import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, requireUuid } from "@pgw/contracts";
import type { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";

import { balanceRows, positionsOf } from "../domain/balances";
import { SharedReads } from "../store/shared-reads";
import { readShopAccounts } from "../store/accounts";
import type { LedgerDeps } from "./deps";

/**
 * GetBalances: one row per supported currency for the shop, zeros included, from one snapshot of
 * its accounts taken after the call arrived (concurrent calls for one shop share reads, see
 * SharedReads). Errors: validation_error (shop_id), ledger_inconsistent (a materialised balance
 * differs from its journal, or a reserve is negative: an alert line, never a partial answer).
 */
export function balancesHandlers({ db, log, metrics }: LedgerDeps): Pick<ServiceImpl<typeof LedgerService>, "getBalances"> {
  const reads = new SharedReads((shopId) => readShopAccounts(db, shopId));
  return {
    async getBalances(req) {
      const shopId = requireUuid(req.shopId, "shop_id");
      const { positions, inconsistencies } = positionsOf(await reads.get(shopId));
      if (inconsistencies.length > 0) {
        metrics.inconsistencies.inc({ check: "balances" });
        log.error({ alert: "ledger_inconsistent", shop_id: shopId, inconsistencies }, "shop balances disagree with the journal");
        throw new AppError("ledger_inconsistent", "the accounting position is internally inconsistent");
      }
      return { balances: balanceRows(positions) };
    },
  };
}
