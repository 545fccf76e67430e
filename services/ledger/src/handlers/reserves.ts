import type { ServiceImpl } from "@connectrpc/connect";
import { requireUuid } from "@pgw/contracts";
import type { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { parseDecimal } from "../domain/amounts";
import { inTransaction } from "../store";
import { releaseReserve, reservePayout } from "../store/reserves";
import { storedTariffs } from "../store/tariffs";
import type { LedgerDeps } from "./deps";
import { appliedQuoteFields, quoteOperation } from "./quote";

/** Overdraft limits are stored with 6 places (operations' shop setting). */
const OVERDRAFT_SCALE = 6;

/**
 * Reserve (payout create) and ReleaseReserve. Errors of Reserve: validation_error,
 * insufficient_balance, invalid_state, idempotency_conflict (see reservePayout).
 */
export function reserveHandlers({ db }: LedgerDeps): Pick<ServiceImpl<typeof LedgerService>, "reserve" | "releaseReserve"> {
  return {
    async reserve(req) {
      const operationId = requireUuid(req.operationId, "operation_id");
      const overdraftLimit = parseDecimal(req.overdraftLimit || "0", "overdraft_limit", OVERDRAFT_SCALE, "non_negative");
      const payout = await quoteOperation(storedTariffs(db), "payout", req);
      const shopId = requireUuid(req.shopId, "shop_id");
      // A repeat answers the held reserve, whose figures equal this quote's (else it is refused).
      const held = await inTransaction(db, (tx) => reservePayout(tx, shopId, operationId, payout.quote, overdraftLimit));
      const figures = appliedQuoteFields(held, payout.tariff);
      return { ...figures, reservedAmount: figures.settlementAmount };
    },

    async releaseReserve(req) {
      const operationId = requireUuid(req.operationId, "operation_id");
      const released = await inTransaction(db, (tx) => releaseReserve(tx, operationId, { reason: "released by operations", actor: "rpc:ReleaseReserve" }));
      return { released };
    },
  };
}
