import type { ParsedUrlQuery } from "node:querystring";
import type Router from "@koa/router";
import { type ErrorDetail } from "@pgw/contracts";
import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { Confirmation } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import type { GatewayClients } from "../clients";
import { adminOperationJson } from "./admin-operation";
import { operationTimeline } from "./operation-timeline";
import { oneOfParam, pageAnswer, pageQuery, queryParam, refuseBadQuery, uuidParam } from "./page-query";
import { deliveryJson } from "./webhook-routes";

/** The statuses an operation listing can filter on. */
export const OPERATION_STATUSES = new Set(["pending", "awaiting_confirmation", "manual_check", "completed", "cancelled", "declined", "expired"]);
// A date (the whole day, UTC) or an RFC 3339 time with its offset.
const DATE_OR_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** An operation in the admin listings and timeline: the public object (card number masked) with its shop and times. */
const listedOperationJson = (op: Operation) => ({
  ...adminOperationJson(op),
  merchant_operation_id: op.merchantOperationId,
  shop_id: op.shopId,
  created_at: op.createdAt,
  updated_at: op.updatedAt,
});

const confirmationJson = (c: Confirmation) => ({
  id: c.id,
  filename: c.filename,
  content_type: c.contentType,
  outcome: c.outcome ?? null,
  manual_check_reason: c.manualCheckReason ?? null,
  findings: c.findings.map((f) => ({ code: f.code, detail: f.detail || null })),
  created_at: c.createdAt,
  applied_at: c.appliedAt ?? null,
});

/** `from`/`to` as RFC 3339 times: a bare date is its day's start (UTC), `to` a day's end. */
export function timeParam(query: ParsedUrlQuery, name: "from" | "to", details: ErrorDetail[]): string | undefined {
  const value = queryParam(query, name, details);
  if (value === undefined) return undefined;
  if (!DATE_OR_TIME.test(value) || Number.isNaN(Date.parse(value))) {
    details.push({ field: name, issue: "must be a date (YYYY-MM-DD) or an RFC 3339 time" });
    return undefined;
  }
  if (value.length > 10) return new Date(value).toISOString();
  const day = new Date(`${value}T00:00:00Z`);
  if (name === "to") day.setUTCDate(day.getUTCDate() + 1);
  return day.toISOString();
}

/**
 * Admin API for operations:
 * - `GET /admin/api/operations?shop_id=&status=&q=&from=&to=&cursor=&limit=` → `{items, next_cursor}`,
 *   newest first; `q` is an operation_id or a merchant_operation_id, `from`/`to` bound the creation
 *   time (a date means the whole day, UTC); `status=manual_check` is the review queue.
 * - `GET /admin/api/operations/:id/timeline` → the operation with its status changes (time, cause,
 *   who decided and why), its webhook deliveries and its confirmations with the review's findings.
 * Card numbers are masked. A bad parameter is a 400 naming it; an unknown operation a 404.
 */
export function operationAdminRoutes(router: Router, clients: Pick<GatewayClients, "operations" | "notifier" | "receipts">): void {
  router.get("/admin/api/operations", async (ctx) => {
    const details: ErrorDetail[] = [];
    const shopId = uuidParam(ctx.query, "shop_id", details);
    const status = oneOfParam(ctx.query, "status", OPERATION_STATUSES, details);
    const query = queryParam(ctx.query, "q", details)?.trim() || undefined;
    const createdFrom = timeParam(ctx.query, "from", details);
    const createdTo = timeParam(ctx.query, "to", details);
    const page = pageQuery(ctx.query, details);
    refuseBadQuery(details);
    const res = await clients.operations.listOperations({ shopId, status, query, createdFrom, createdTo, after: page.after, limit: page.limit + 1 });
    ctx.body = pageAnswer(res.operations, page.limit, (op) => ({ createdAt: op.createdAt, id: op.operationId }), listedOperationJson);
  });

  router.get("/admin/api/operations/:id/timeline", async (ctx) => {
    const { operation, statusChanges, deliveries, confirmations } = await operationTimeline(clients, ctx.params.id);
    ctx.body = {
      operation: listedOperationJson(operation),
      status_changes: statusChanges.map((c) => ({ from: c.fromStatus, to: c.toStatus, at: c.at, cause: c.cause, actor: c.actor ?? null, reason: c.reason ?? null })),
      webhook_deliveries: deliveries.map(deliveryJson),
      confirmations: confirmations.map(confirmationJson),
    };
  });
}
