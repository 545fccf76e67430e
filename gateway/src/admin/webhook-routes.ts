import type Router from "@koa/router";
import type { Client } from "@connectrpc/connect";
import { type ErrorDetail } from "@pgw/contracts";
import type { Delivery, NotifierService } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";
import type { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { limitParam, refuseBadQuery } from "./page-query";

/** A delivery and its attempt log as the admin API shows them. */
export const deliveryJson = (d: Delivery | undefined) => ({
  id: d?.id,
  webhook_id: d?.webhookId,
  event_type: d?.eventType,
  operation_id: d?.operationId,
  status: d?.status,
  attempts: d?.attempts,
  next_attempt_at: d?.nextAttemptAt ?? null,
  created_at: d?.createdAt,
  attempt_log: (d?.attemptLog ?? []).map((a) => ({
    number: a.number,
    at: a.at,
    status_code: a.statusCode || null,
    latency_ms: a.latencyMs,
    response_snippet: a.responseSnippet,
    error: a.error || null,
  })),
});

/**
 * Admin API (docs/architecture.md, Admin API) for webhooks, backed by the notifier:
 * - `POST /admin/api/shops/:id/webhook-secret` → 201 `{secret}`: rotates the shop's signing secret
 *   and shows the new one once; the previous one keeps signing for 24 h.
 * - `GET /admin/api/shops/:id/webhook-deliveries[?limit=1..500]` → `{deliveries: [...]}`, newest
 *   first, each with its attempt log.
 * - `POST /admin/api/webhook-deliveries/:id/redeliver` → 200 `{delivery}`: sends it again now with
 *   the same webhook-id; 412 invalid_state while an attempt of it is in flight.
 * Unknown shop or delivery: 404.
 */
export function webhookAdminRoutes(router: Router, clients: { notifier: Client<typeof NotifierService>; accounts: Client<typeof AccountsService> }): void {
  router.post("/admin/api/shops/:id/webhook-secret", async (ctx) => {
    const shopId = ctx.params.id;
    await clients.accounts.getShop({ shopId });
    const { secret } = await clients.notifier.rotateSecret({ shopId });
    ctx.status = 201;
    ctx.body = { secret };
  });

  router.get("/admin/api/shops/:id/webhook-deliveries", async (ctx) => {
    const shopId = ctx.params.id;
    const details: ErrorDetail[] = [];
    const limit = limitParam(ctx.query, details);
    refuseBadQuery(details);
    await clients.accounts.getShop({ shopId });
    const { deliveries } = await clients.notifier.listDeliveries({ shopId, limit });
    ctx.body = { deliveries: deliveries.map(deliveryJson) };
  });

  router.post("/admin/api/webhook-deliveries/:id/redeliver", async (ctx) => {
    const { delivery } = await clients.notifier.redeliver({ deliveryId: ctx.params.id });
    ctx.body = { delivery: deliveryJson(delivery) };
  });
}
