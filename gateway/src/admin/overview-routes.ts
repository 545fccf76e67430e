import type Router from "@koa/router";
import type { GatewayClients } from "../clients";
import { isCurrency, SUPPORTED_CURRENCIES, type ErrorDetail } from "@pgw/contracts";
import { balanceRowJson } from "../routes/balances";
import { limitParam, queryParam, refuseBadQuery } from "./page-query";

/**
 * Read-only admin API the console's overview pages use: a shop's balances with the journal postings
 * behind them (`GET /admin/api/shops/:id/journal?currency=&limit=`, newest first) and the routing table.
 */
export function overviewAdminRoutes(router: Router, clients: GatewayClients): void {
  router.get("/admin/api/shops/:id/balances", async (ctx) => {
    const { shop } = await clients.accounts.getShop({ shopId: ctx.params.id });
    const res = await clients.ledger.getBalances({ shopId: shop!.id });
    ctx.body = { shop_id: shop!.id, balances: res.balances.map(balanceRowJson) };
  });

  router.get("/admin/api/shops/:id/journal", async (ctx) => {
    const details: ErrorDetail[] = [];
    const currency = queryParam(ctx.query, "currency", details) ?? "";
    if (currency && !isCurrency(currency)) details.push({ field: "currency", issue: `must be one of ${SUPPORTED_CURRENCIES.join(", ")}` });
    const limit = limitParam(ctx.query, details);
    refuseBadQuery(details);
    const { shop } = await clients.accounts.getShop({ shopId: ctx.params.id });
    const res = await clients.ledger.listShopPostings({ shopId: shop!.id, currency, limit });
    ctx.body = {
      shop_id: shop!.id,
      postings: res.postings.map((p) => ({
        entry_id: p.entryId,
        kind: p.kind,
        reason: p.reason,
        actor: p.actor,
        account: p.account,
        currency: p.currency,
        amount: p.amount,
        balance_after: p.balanceAfter,
        created_at: p.createdAt,
      })),
    };
  });

  router.get("/admin/api/routes", async (ctx) => {
    const res = await clients.routing.listRoutes({});
    ctx.body = {
      routes: res.routes.map((r) => ({
        id: r.id,
        type: r.type,
        method: r.method,
        currency: r.currency,
        settlement_currency: r.settlementCurrency,
        priority: r.priority,
        min_amount: r.minAmount,
        max_amount: r.maxAmount,
        requires_receipt: r.requiresReceipt,
        auto_conversion: r.autoConversion,
        enabled: r.enabled,
      })),
    };
  });
}
