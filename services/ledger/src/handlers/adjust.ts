import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, requireUuid } from "@pgw/contracts";
import type { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { parseAmount, parseCurrency, parseText } from "../domain/amounts";
import { adjustmentPostings } from "../domain/flows";
import { postEntry } from "../store/journal";
import { inTransaction } from "../store";
import type { LedgerDeps } from "./deps";

/**
 * Adjust: a manual credit (positive) or debit (negative) of the shop's available balance against
 * the system account manual_adjustments, as one journal entry with reason and actor; source
 * `adjust:<idempotency_key>`. A debit may take the balance below the overdraft limit: it is the
 * admin's decision. Errors: validation_error; idempotency_conflict (the key was used for another
 * adjustment).
 */
export function adjustHandlers({ db, log }: LedgerDeps): Pick<ServiceImpl<typeof LedgerService>, "adjust"> {
  return {
    async adjust(req) {
      const shopId = requireUuid(req.shopId, "shop_id");
      const currency = parseCurrency(req.currency, "currency");
      const amount = parseAmount(req.amount, "amount", currency, "non_zero");
      const reason = parseText(req.reason, "reason");
      const actor = parseText(req.actor, "actor", 200);
      const key = parseText(req.idempotencyKey, "idempotency_key", 200);
      const draft = { source: `adjust:${key}`, kind: "adjustment", shopId, reason, actor, postings: adjustmentPostings(shopId, currency, amount) } as const;
      const posted = await inTransaction(db, (tx) => postEntry(tx, draft));
      if (!posted.sameContent) throw new AppError("idempotency_conflict", "idempotency key already used for another adjustment");
      if (posted.created) log.info({ entry_id: posted.entryId, shop_id: shopId, currency, amount: amount.toFixed(), reason, actor }, "manual adjustment posted");
      return { entryId: posted.entryId };
    },
  };
}
