import type Router from "@koa/router";
import type { Client } from "@connectrpc/connect";
import { fieldError } from "@pgw/contracts";
import { type Logger } from "@pgw/kit/runtime";
import type { NotifierService } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";
import type { AccountsService, ApiKey, Shop } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { z } from "zod";
import type { KeyCache } from "../auth/key-cache";
import { parseBody } from "../http/validate";

const shopFields = {
  name: z.string().min(1).max(200),
  webhook_url: z.string().max(2048).nullable(),
  checkout_enabled: z.boolean(),
  settlement_currency: z.string(),
  overdraft_limit: z.string(),
  // The wire's int32 (operations checks the allowed range; a larger number would not encode).
  rate_limit_rps: z.number().int().min(-(2 ** 31)).max(2 ** 31 - 1),
};
export const createShopBody = z.object({ merchant_id: z.string(), ...shopFields }).partial({
  webhook_url: true,
  checkout_enabled: true,
  settlement_currency: true,
  overdraft_limit: true,
  rate_limit_rps: true,
});
// merchant_id is accepted so a shop read back can be sent as is, but a shop never changes merchant
// (its balances and keys belong to it).
export const updateShopBody = z.object({ merchant_id: z.string(), ...shopFields }).partial();

/** The settings of a create or update body as the RPC takes them (`webhook_url: null` clears it). */
export function shopSettings(body: z.infer<typeof updateShopBody>) {
  return {
    name: body.name,
    webhookUrl: body.webhook_url ?? undefined,
    clearWebhookUrl: body.webhook_url === null,
    checkoutEnabled: body.checkout_enabled,
    settlementCurrency: body.settlement_currency,
    overdraftLimit: body.overdraft_limit,
    rateLimitRps: body.rate_limit_rps,
  };
}

/** A shop as the admin API shows it. */
export const shopJson = (s: Shop | undefined) => ({
  id: s?.id,
  merchant_id: s?.merchantId,
  name: s?.name,
  webhook_url: s?.webhookUrl ?? null,
  checkout_enabled: s?.checkoutEnabled,
  settlement_currency: s?.settlementCurrency,
  overdraft_limit: s?.overdraftLimit,
  rate_limit_rps: s?.rateLimitRps,
  created_at: s?.createdAt,
});

const apiKeyJson = (k: ApiKey | undefined) => ({
  id: k?.id,
  shop_id: k?.shopId,
  label: k?.label,
  prefix: k?.prefix,
  created_at: k?.createdAt,
  revoked_at: k?.revokedAt ?? null,
});

/**
 * A new shop's first webhook signing secret, shown once at its creation (as a rotation shows the
 * next one), so its very first webhook can be verified. null when the notifier could not be reached:
 * the shop exists, and a rotation makes and shows a secret.
 */
export async function firstWebhookSecret(notifier: Client<typeof NotifierService>, log: Logger, shopId: string): Promise<string | null> {
  try {
    return (await notifier.rotateSecret({ shopId })).secret;
  } catch (err) {
    log.warn({ err, shop_id: shopId }, "new shop: no webhook secret made (rotate it through the admin API)");
    return null;
  }
}

/**
 * Admin API (docs/architecture.md, Admin API) for merchants, shops and API keys, backed by
 * operations' AccountsService. A revoke or a shop change also evicts the keys concerned from this
 * gateway's own key cache before it answers, so the next request already sees it here; other
 * replicas learn a revoke from its event and a shop change within the cache TTL.
 */
export function accountsAdminRoutes(
  router: Router,
  { accounts, notifier }: { accounts: Client<typeof AccountsService>; notifier: Client<typeof NotifierService> },
  keyCache: KeyCache,
  log: Logger,
): void {
  router.post("/admin/api/merchants", async (ctx) => {
    const body = parseBody(z.object({ name: z.string().min(1).max(200) }), ctx.request.body);
    const { merchant } = await accounts.createMerchant({ name: body.name });
    ctx.status = 201;
    ctx.body = { id: merchant?.id, name: merchant?.name, created_at: merchant?.createdAt };
  });

  router.post("/admin/api/shops", async (ctx) => {
    const body = parseBody(createShopBody, ctx.request.body);
    const { shop } = await accounts.createShop({ merchantId: body.merchant_id, name: body.name, settings: shopSettings(body) });
    ctx.status = 201;
    ctx.body = { ...shopJson(shop), webhook_secret: shop ? await firstWebhookSecret(notifier, log, shop.id) : null };
  });

  router.patch("/admin/api/shops/:id", async (ctx) => {
    const body = parseBody(updateShopBody, ctx.request.body);
    if (body.merchant_id !== undefined) {
      const current = await accounts.getShop({ shopId: ctx.params.id });
      if (current.shop?.merchantId !== body.merchant_id) throw fieldError("merchant_id", "cannot be changed");
    }
    const { shop } = await accounts.updateShop({ shopId: ctx.params.id, settings: shopSettings(body) });
    keyCache.evictWhere((principal) => principal.shopId === shop?.id);
    ctx.body = shopJson(shop);
  });

  router.get("/admin/api/shops/:id", async (ctx) => {
    const { shop } = await accounts.getShop({ shopId: ctx.params.id });
    ctx.body = shopJson(shop);
  });

  router.post("/admin/api/shops/:id/api-keys", async (ctx) => {
    const body = parseBody(z.object({ label: z.string().max(200).optional() }), ctx.request.body ?? {});
    const res = await accounts.issueApiKey({ shopId: ctx.params.id, label: body.label ?? "" });
    ctx.status = 201;
    // The plaintext is returned here once and never again.
    ctx.body = { ...apiKeyJson(res.apiKey), api_key: res.plaintext };
  });

  router.get("/admin/api/shops/:id/api-keys", async (ctx) => {
    const res = await accounts.listApiKeys({ shopId: ctx.params.id });
    ctx.body = { api_keys: res.apiKeys.map(apiKeyJson) };
  });

  router.post("/admin/api/api-keys/:id/revoke", async (ctx) => {
    const res = await accounts.revokeApiKey({ apiKeyId: ctx.params.id });
    keyCache.evictWhere((principal) => principal.apiKeyId === res.apiKey?.id);
    ctx.body = apiKeyJson(res.apiKey);
  });
}
