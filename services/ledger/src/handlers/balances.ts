import type { ServiceImpl } from "@connectrpc/connect";
import { AppError } from "@pgw/kit";
import type { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { balanceRows } from "../domain/balances";
import { readShopPositions, type Db } from "../store";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** GetBalances: one row per supported currency for the shop, zeros included. */
export function balancesHandlers(db: Db): Pick<ServiceImpl<typeof LedgerService>, "getBalances"> {
  return {
    async getBalances(req) {
      if (!UUID.test(req.shopId)) throw new AppError("validation_error", "shop_id must be a UUID");
      return { balances: balanceRows(await readShopPositions(db, req.shopId.toLowerCase())) };
    },
  };
}
