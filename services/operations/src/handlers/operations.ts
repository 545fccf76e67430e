import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, isUuid, requireUuid } from "@pgw/contracts";
import { isTeamCall } from "@pgw/kit/rpc";
import type { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { banksOf } from "../domain/banks";
import { findCreateShop, findOperation, findOperationById, listOperations, publishedStatusEvents } from "../store";
import { cancelOperationHandler, operationKey } from "./cancel-operation";
import { createOperationHandler } from "./create-operation";
import type { Deps } from "./deps";
import { lateFundsHandlers } from "./late-funds";
import { operationHistory } from "./operation-history";
import { pageOf, timeOf } from "./paging";
import { reviewHandlers } from "./review-operation";
import { operationWire } from "./wire";

/** Payments and payouts: create, read, cancel; the bank dictionary; the checkout lookup; late funds. */
export function operationsHandlers(deps: Deps): Partial<ServiceImpl<typeof OperationsService>> {
  const create = createOperationHandler(deps);
  const cancel = cancelOperationHandler(deps);
  const review = reviewHandlers(deps);
  const history = operationHistory(deps.sql);
  const { sql, keys } = deps;
  return {
    ...lateFundsHandlers(deps),

    async createOperation(req, context) {
      const { row, shop } = await create(req, context.timeoutMs());
      return { operation: operationWire(row, keys), checkoutEnabled: shop.checkoutEnabled };
    },

    // Internal teams may read operations (routes.ts), but see card numbers masked, as operators do.
    async getOperationState(req, context) {
      const row = await findOperation(sql, requireUuid(req.shopId, "shop_id"), operationKey(req.ref));
      // A create still in flight is not readable yet; another shop's operation does not exist here.
      if (!row || row.status === "creating") throw new AppError("not_found", "operation not found");
      return { operation: operationWire(row, keys, isTeamCall(context.values)) };
    },

    async cancelOperation(req) {
      const { outcome, row } = await cancel(req);
      return { outcome, operation: operationWire(row, keys) };
    },

    async applyReviewOutcome(req) {
      return { operation: operationWire(await review.applyReviewOutcome(req), keys) };
    },

    async resolveManualCheck(req) {
      return { operation: operationWire(await review.resolveManualCheck(req), keys) };
    },

    async listBanks(req) {
      return { banks: banksOf(req.currency).map((b) => ({ code: b.code, name: b.name })) };
    },

    async getCheckout(req, context) {
      const row = isUuid(req.operationId) ? await findOperationById(sql, req.operationId.toLowerCase()) : null;
      if (!row || row.status === "creating" || row.type !== "payment") throw new AppError("not_found", "operation not found");
      const shop = (await findCreateShop(sql, row.shopId))!;
      return { operation: operationWire(row, keys, isTeamCall(context.values)), checkoutEnabled: shop.checkoutEnabled };
    },

    async listStatusEvents(req) {
      const since = timeOf(req.since || undefined, "since") ?? new Date(0);
      const rows = await publishedStatusEvents(sql, since, Math.min(Math.max(req.limit || 500, 1), 5000));
      return { events: rows.map((r) => ({ eventId: r.id, payload: r.payload, occurredAt: r.createdAt.toISOString() })) };
    },

    async listOperations(req, context) {
      const filter = {
        shopId: req.shopId ? requireUuid(req.shopId, "shop_id") : undefined,
        status: req.status,
        query: req.query?.trim() || undefined,
        createdFrom: timeOf(req.createdFrom, "from"),
        createdTo: timeOf(req.createdTo, "to"),
      };
      const rows = await listOperations(sql, filter, pageOf(req.after, req.limit));
      return { operations: rows.map((row) => operationWire(row, keys, isTeamCall(context.values))) };
    },

    async getOperationHistory(req) {
      const { row, changes } = await history(req.operationId);
      return { operation: operationWire(row, keys, true), statusChanges: changes };
    },
  };
}
