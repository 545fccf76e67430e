import type Router from "@koa/router";
import type { Client } from "@connectrpc/connect";
import { CURRENCY_SCALE, formatAmount, SUPPORTED_CURRENCIES, type Currency } from "@pgw/contracts";
import type { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import type { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { parseBody } from "../http/validate";
import { adminActor } from "./admin-auth";

const SIGNED_DECIMAL = /^-?(0|[1-9]\d{0,17})(\.\d+)?$/;

/** An adjustment as the admin API and the console take it. */
export const adjustmentBody = z
  .object({
    currency: z.enum(SUPPORTED_CURRENCIES as [Currency, ...Currency[]]),
    amount: z.string().regex(SIGNED_DECIMAL, "must be a signed decimal string"),
    reason: z.string().trim().min(1, "must not be empty").max(2048),
  })
  .superRefine((body, ctx) => {
    const places = body.amount.split(".")[1]?.length ?? 0;
    if (places > CURRENCY_SCALE[body.currency]) ctx.addIssue({ code: "custom", path: ["amount"], message: `must have at most ${CURRENCY_SCALE[body.currency]} decimal places` });
    if (/^-?[0.]+$/.test(body.amount)) ctx.addIssue({ code: "custom", path: ["amount"], message: "must not be zero" });
  });

/**
 * Admin API (docs/architecture.md, Admin API) for the ledger: `POST /admin/api/shops/:id/adjustments`
 * `{currency, amount, reason}` → 201 `{entry_id, shop_id, currency, amount, reason}`, a manual
 * credit (positive amount) or debit (negative) of the shop's balance as one journal entry.
 * Idempotent by the `Idempotency-Key` header when given (a fresh key otherwise); 404 for an
 * unknown shop. The entry's actor is the signed-in operator.
 */
export function ledgerAdminRoutes(router: Router, clients: { ledger: Client<typeof LedgerService>; accounts: Client<typeof AccountsService> }): void {
  router.post("/admin/api/shops/:id/adjustments", async (ctx) => {
    const body = parseBody(adjustmentBody, ctx.request.body);
    const shopId = ctx.params.id;
    await clients.accounts.getShop({ shopId });
    const { entryId } = await clients.ledger.adjust({
      shopId,
      currency: body.currency,
      amount: body.amount,
      reason: body.reason,
      actor: adminActor(ctx),
      idempotencyKey: ctx.get("idempotency-key") || randomUUID(),
    });
    ctx.status = 201;
    ctx.body = { entry_id: entryId, shop_id: shopId, currency: body.currency, amount: formatAmount(body.amount, body.currency), reason: body.reason };
  });
}
