import type Router from "@koa/router";
import type { GatewayClients } from "../clients";
import { balanceRowJson } from "../routes/balances";
import { adminOperationJson } from "./admin-operation";
import { parseListQuery } from "./list-query";

const STATUSES = new Set(["pending", "awaiting_confirmation", "manual_check", "completed", "cancelled", "declined", "expired"]);

/**
 * Read-only admin API the console's overview pages use: a shop's balances, operations (the
 * manual-check queue is `?status=manual_check`) and the routing table.
 */
export function overviewAdminRoutes(router: Router, clients: GatewayClients): void {
  router.get("/admin/api/shops/:id/balances", async (ctx) => {
    const { shop } = await clients.accounts.getShop({ shopId: ctx.params.id });
    const res = await clients.ledger.getBalances({ shopId: shop!.id });
    ctx.body = { shop_id: shop!.id, balances: res.balances.map(balanceRowJson) };
  });

  router.get("/admin/api/operations", async (ctx) => {
    const { shopId, filter: status, limit } = parseListQuery(ctx.query, { name: "status", allowed: STATUSES });
    const res = await clients.operations.listOperations({ shopId, status, limit });
    ctx.body = {
      operations: res.operations.map((op) => ({
        ...adminOperationJson(op),
        merchant_operation_id: op.merchantOperationId,
        shop_id: op.shopId,
        created_at: op.createdAt,
        updated_at: op.updatedAt,
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
