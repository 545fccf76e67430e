import type Router from "@koa/router";
import { AppError, isUuid } from "@pgw/contracts";
import type Koa from "koa";
import { randomUUID } from "node:crypto";
import { parseBody } from "../../../http/validate";
import { createShopBody, firstWebhookSecret, shopSettings, updateShopBody } from "../../accounts-routes";
import { adjustmentBody } from "../../ledger-routes";
import { adminActor } from "../../admin-auth";
import { html, type Html } from "../html";
import { csrfField, notice, shownOnce } from "../layout";
import { done, formOf, render, viewerOf, type ConsoleDeps } from "./common";
import { shopBody } from "./shop-view";

const NOTICES: Record<string, string> = {
  settings: "Settings saved.",
  revoked: "The API key is revoked: requests with it are refused from now on.",
  redelivered: "The delivery is sent again now.",
  adjusted: "Adjustment posted.",
};

/** The settings form as the admin API's PATCH body: an empty webhook URL clears it, an unticked box is false. */
function settingsBody(form: Record<string, string>) {
  return {
    name: form.name,
    webhook_url: form.webhook_url?.trim() ? form.webhook_url.trim() : null,
    checkout_enabled: form.checkout_enabled === "true",
    settlement_currency: form.settlement_currency,
    overdraft_limit: form.overdraft_limit?.trim(),
    rate_limit_rps: /^\d{1,9}$/.test(form.rate_limit_rps ?? "") ? Number(form.rate_limit_rps) : form.rate_limit_rps,
  };
}

/** A shop's page and everything done on it: settings, keys (issued once, revoked after a confirmation), webhook secret, redelivery, adjustments. */
export function shopPages(router: Router, { clients, evictKeys, log }: ConsoleDeps): void {
  const shopPage = async (ctx: Koa.Context, shopId: string, revealed: Html | "" = "") => {
    if (!isUuid(shopId)) throw new AppError("not_found", "no shop has this id");
    const { shop } = await clients.accounts.getShop({ shopId });
    const [{ apiKeys }, { deliveries }, { balances }, { postings }] = await Promise.all([
      clients.accounts.listApiKeys({ shopId }),
      clients.notifier.listDeliveries({ shopId, limit: 20 }),
      clients.ledger.getBalances({ shopId }),
      clients.ledger.listShopPostings({ shopId, currency: "", limit: 20 }),
    ]);
    const body = shopBody({ shop: shop!, keys: apiKeys, deliveries, balances, postings }, viewerOf(ctx));
    render(ctx, shop!.name, html`${notice(NOTICES[String(ctx.query.done)])}${revealed}${body}`, "/admin/merchants");
  };

  router.get("/admin/shops/:id", (ctx) => shopPage(ctx, ctx.params.id));

  router.post("/admin/shops", async (ctx) => {
    const form = formOf(ctx);
    const body = parseBody(createShopBody, { merchant_id: form.merchant_id ?? "", name: form.name ?? "", settlement_currency: form.settlement_currency, checkout_enabled: form.checkout_enabled === "true" });
    const { shop } = await clients.accounts.createShop({ merchantId: body.merchant_id, name: body.name, settings: shopSettings(body) });
    const secret = await firstWebhookSecret(clients.notifier, log, shop!.id);
    const revealed = secret
      ? shownOnce("revealed-secret", "Webhook signing secret", secret)
      : html`<p class="notice" role="status">No webhook signing secret could be made just now: rotate it below to get one.</p>`;
    await shopPage(ctx, shop!.id, html`<p class="notice" role="status">Shop created.</p>${revealed}`);
  });

  router.post("/admin/shops/:id/settings", async (ctx) => {
    const body = parseBody(updateShopBody, settingsBody(formOf(ctx)));
    const { shop } = await clients.accounts.updateShop({ shopId: ctx.params.id, settings: shopSettings(body) });
    evictKeys({ shopId: shop!.id });
    done(ctx, `/admin/shops/${shop!.id}`, "settings");
  });

  router.post("/admin/shops/:id/api-keys", async (ctx) => {
    const res = await clients.accounts.issueApiKey({ shopId: ctx.params.id, label: (formOf(ctx).label ?? "").trim() });
    ctx.status = 201;
    await shopPage(ctx, ctx.params.id, shownOnce("revealed-key", "New API key", res.plaintext));
  });

  router.get("/admin/shops/:id/api-keys/:key/revoke", async (ctx) => {
    const { apiKeys } = await clients.accounts.listApiKeys({ shopId: ctx.params.id });
    const key = apiKeys.find((k) => k.id === ctx.params.key);
    if (!key) throw new AppError("not_found", "this shop has no such API key");
    render(
      ctx,
      "Revoke API key?",
      html`<p>Requests signed with <code>${key.prefix}…</code>${key.label ? ` (${key.label})` : ""} will be refused at once. This cannot be undone.</p>
<form method="post" action="/admin/shops/${ctx.params.id}/api-keys/${key.id}/revoke">${csrfField(viewerOf(ctx))}<button class="danger">Revoke this key</button>
<a href="/admin/shops/${ctx.params.id}">Keep it</a></form>`,
      "/admin/merchants",
    );
  });

  router.post("/admin/shops/:id/api-keys/:key/revoke", async (ctx) => {
    const { apiKey } = await clients.accounts.revokeApiKey({ apiKeyId: ctx.params.key });
    evictKeys({ apiKeyId: apiKey!.id });
    done(ctx, `/admin/shops/${apiKey!.shopId}`, "revoked");
  });

  router.post("/admin/shops/:id/webhook-secret", async (ctx) => {
    await clients.accounts.getShop({ shopId: ctx.params.id });
    const { secret } = await clients.notifier.rotateSecret({ shopId: ctx.params.id });
    await shopPage(ctx, ctx.params.id, shownOnce("revealed-secret", "New webhook signing secret", secret));
  });

  router.post("/admin/shops/:id/deliveries/:delivery/redeliver", async (ctx) => {
    await clients.notifier.redeliver({ deliveryId: ctx.params.delivery });
    done(ctx, `/admin/shops/${ctx.params.id}`, "redelivered");
  });

  router.post("/admin/shops/:id/adjustments", async (ctx) => {
    const form = formOf(ctx);
    const body = parseBody(adjustmentBody, form);
    const { shop } = await clients.accounts.getShop({ shopId: ctx.params.id });
    await clients.ledger.adjust({ shopId: shop!.id, currency: body.currency, amount: body.amount, reason: body.reason, actor: adminActor(ctx), idempotencyKey: form.idempotency_key || randomUUID() });
    done(ctx, `/admin/shops/${shop!.id}`, "adjusted");
  });
}
