import type { ServiceImpl } from "@connectrpc/connect";
import { fieldError, formatAmount, isCurrency, requireUuid } from "@pgw/contracts";
import type { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { shopPostings } from "../store/shop-postings";
import type { LedgerDeps } from "./deps";

/**
 * ListShopPostings: the latest postings to a shop's available and reserved accounts (1–500, 50 by
 * default), amounts at their currency's scale. Errors: validation_error (shop_id, currency).
 */
export function shopPostingsHandlers({ db }: LedgerDeps): Pick<ServiceImpl<typeof LedgerService>, "listShopPostings"> {
  return {
    async listShopPostings(req) {
      const shopId = requireUuid(req.shopId, "shop_id");
      if (req.currency && !isCurrency(req.currency)) throw fieldError("currency", "is not a supported currency");
      const rows = await shopPostings(db, shopId, req.currency || null, Math.min(Math.max(req.limit || 50, 1), 500));
      return {
        postings: rows.map((r) => ({
          entryId: r.entryId,
          kind: r.kind,
          reason: r.reason,
          actor: r.actor,
          account: r.account,
          currency: r.currency,
          amount: isCurrency(r.currency) ? formatAmount(r.amount, r.currency) : r.amount.toFixed(),
          balanceAfter: isCurrency(r.currency) ? formatAmount(r.balanceAfter, r.currency) : r.balanceAfter.toFixed(),
          createdAt: r.createdAt.toISOString(),
        })),
      };
    },
  };
}
