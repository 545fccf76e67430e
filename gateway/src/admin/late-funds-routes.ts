import type Router from "@koa/router";
import { AppError, isUuid, type ErrorDetail } from "@pgw/contracts";
import type { LateFunds } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { z } from "zod";
import type { GatewayClients } from "../clients";
import { parseBody } from "../http/validate";
import { adminActor } from "./admin-auth";
import { limitParam, oneOfParam, refuseBadQuery, uuidParam } from "./page-query";

const STATES = new Set(["open", "resolved"]);

/** What was done with late funds, as the admin API and the console take it. */
export const lateFundsResolution = z.object({
  note: z.string({ error: "is required: say what was done with the money" }).trim().min(1, "is required: say what was done with the money").max(2048, "must be at most 2048 characters"),
});

function lateFundsJson(item: LateFunds) {
  return {
    id: item.id,
    operation_id: item.operationId,
    shop_id: item.shopId,
    operation_type: item.operationType,
    operation_status: item.operationStatus,
    amount: item.amount,
    currency: item.currency,
    reported_at: item.reportedAt,
    resolved_at: item.resolvedAt ?? null,
    resolved_by: item.resolvedBy ?? null,
    note: item.note ?? null,
  };
}

/**
 * Admin API for late funds: money a provider reported for an operation that had already ended
 * without it (cancelled, declined, expired), which someone must return or book.
 * `GET /admin/api/late-funds?state=open|resolved&shop_id=&limit=` → `{late_funds: [...]}`, newest first;
 * `POST /admin/api/late-funds/:id/resolve` `{note}` → 200 with the item, once (412 `invalid_state` after).
 */
export function lateFundsAdminRoutes(router: Router, clients: Pick<GatewayClients, "operations">): void {
  router.get("/admin/api/late-funds", async (ctx) => {
    const details: ErrorDetail[] = [];
    const shopId = uuidParam(ctx.query, "shop_id", details);
    const state = oneOfParam(ctx.query, "state", STATES, details);
    const limit = limitParam(ctx.query, details);
    refuseBadQuery(details);
    const res = await clients.operations.listLateFunds({ shopId, state, limit });
    ctx.body = { late_funds: res.lateFunds.map(lateFundsJson) };
  });

  router.post("/admin/api/late-funds/:id/resolve", async (ctx) => {
    if (!isUuid(ctx.params.id)) throw new AppError("not_found", "late funds not found");
    const body = parseBody(lateFundsResolution, ctx.request.body);
    const res = await clients.operations.resolveLateFunds({ id: ctx.params.id, actor: adminActor(ctx), note: body.note });
    ctx.body = lateFundsJson(res.lateFunds!);
  });
}
