import type Router from "@koa/router";
import { operationJson } from "@pgw/kit";
import { OperationType, type Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { GatewayClients } from "../clients";
import { balanceRowJson } from "../routes/balances";
import { parseListQuery } from "./list-query";

/**
 * A payout's card number as the console shows it: the first six and last four digits (PCI DSS
 * 3.4's display rule); operators never need the whole PAN, which only the merchant's API returns.
 */
function maskedDestination(op: Operation): string | undefined {
  if (op.type !== OperationType.PAYOUT || !op.number || !/^\d{13,19}$/.test(op.number)) return op.number;
  return `${op.number.slice(0, 6)}${"*".repeat(op.number.length - 10)}${op.number.slice(-4)}`;
}

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
        ...operationJson(op),
        number: maskedDestination(op),
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
