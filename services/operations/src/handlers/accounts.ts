import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, constantTimeEqual, formatAmount, hmacHex, isCurrency, requireUuid } from "@pgw/contracts";
import { AccountsService, type ShopSettings } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { generateApiKey } from "../domain/api-key";
import { overdraftLimitOf, validateShopSettings, type ShopSettingsInput } from "../domain/shop-settings";
import { enqueueApiKeyRevoked, enqueueShopChanged } from "../events";
import {
  createMerchant,
  findApiKeyByHash,
  findShop,
  insertApiKey,
  insertShop,
  listApiKeys,
  listMerchants,
  listShops,
  lockApiKey,
  lockShopSettings,
  markApiKeyRevoked,
  merchantExists,
  updateShop,
  type ApiKeyRow,
  type MerchantRow,
  type ShopRow,
  type ShopSettingsChange,
} from "../store";
import type { Deps } from "./deps";
import { pageOf } from "./paging";

const merchantWire = (m: MerchantRow) => ({ id: m.id, name: m.name, createdAt: m.createdAt.toISOString() });

const shopWire = (s: ShopRow) => ({
  id: s.id,
  merchantId: s.merchantId,
  name: s.name,
  webhookUrl: s.webhookUrl ?? undefined,
  checkoutEnabled: s.checkoutEnabled,
  settlementCurrency: s.settlementCurrency,
  // In the shop's settlement currency, at its scale (USDT 6): stored and reserved against that way.
  overdraftLimit: isCurrency(s.settlementCurrency) ? formatAmount(s.overdraftLimit, s.settlementCurrency) : s.overdraftLimit.toFixed(),
  rateLimitRps: s.rateLimitRps,
  createdAt: s.createdAt.toISOString(),
});

const apiKeyWire = (k: ApiKeyRow) => ({
  id: k.id,
  shopId: k.shopId,
  label: k.label,
  prefix: k.prefix,
  createdAt: k.createdAt.toISOString(),
  revokedAt: k.revokedAt?.toISOString(),
});

/** Wire → domain. An empty webhook_url, like a cleared one, means the shop has no URL (null). */
function settingsInput(s: ShopSettings | undefined): ShopSettingsInput {
  return {
    name: s?.name,
    webhookUrl: s?.clearWebhookUrl || s?.webhookUrl === "" ? null : s?.webhookUrl,
    checkoutEnabled: s?.checkoutEnabled,
    settlementCurrency: s?.settlementCurrency,
    overdraftLimit: s?.overdraftLimit,
    rateLimitRps: s?.rateLimitRps,
  };
}

function shopData(input: ShopSettingsInput): ShopSettingsChange {
  return {
    name: input.name?.trim(),
    webhookUrl: input.webhookUrl,
    checkoutEnabled: input.checkoutEnabled,
    settlementCurrency: input.settlementCurrency,
    overdraftLimit: overdraftLimitOf(input)?.toFixed(6),
    rateLimitRps: input.rateLimitRps,
  };
}

/** Merchants, shops and API keys: the admin interface's commands and the gateway's key lookup. */
export function accountsHandlers({ db, sql, apiKeyHashSecret, localMode }: Pick<Deps, "db" | "sql" | "apiKeyHashSecret" | "localMode">): Partial<ServiceImpl<typeof AccountsService>> {
  const shopOrNotFound = async (shopId: string) => {
    const shop = await findShop(db, requireUuid(shopId, "shop_id"));
    if (!shop) throw new AppError("not_found", "shop not found");
    return shop;
  };

  return {
    async createMerchant(req) {
      const name = req.name.trim();
      if (!name || name.length > 200) throw new AppError("validation_error", "invalid merchant", [{ field: "name", issue: "must be 1-200 characters" }]);
      return { merchant: merchantWire(await createMerchant(db, name)) };
    },

    async createShop(req) {
      const merchantId = requireUuid(req.merchantId, "merchant_id");
      const input = { ...settingsInput(req.settings), name: req.name || req.settings?.name };
      validateShopSettings(input, true, localMode);
      if (!(await merchantExists(db, merchantId))) throw new AppError("not_found", "merchant not found", [{ field: "merchant_id", issue: "no such merchant" }]);
      const shop = await sql.$transaction(async (tx) => {
        const created = await insertShop(tx, merchantId, { ...shopData(input), name: input.name!.trim() });
        await enqueueShopChanged(tx, created);
        return created;
      });
      return { shop: shopWire(shop) };
    },

    async updateShop(req) {
      const input = settingsInput(req.settings);
      const shopId = requireUuid(req.shopId, "shop_id");
      const shop = await sql.$transaction(async (tx) => {
        // Row lock: the settings are checked against the currency and limit this update replaces.
        const current = await lockShopSettings(tx, shopId);
        if (!current) throw new AppError("not_found", "shop not found");
        validateShopSettings(input, false, localMode, current);
        const updated = await updateShop(tx, shopId, shopData(input));
        await enqueueShopChanged(tx, updated);
        return updated;
      });
      return { shop: shopWire(shop) };
    },

    async listMerchants(req) {
      const rows = await listMerchants(sql, req.query.trim(), pageOf(req.after, req.limit));
      return { merchants: rows.map(merchantWire) };
    },

    async listShops(req) {
      const merchantId = req.merchantId === undefined ? undefined : requireUuid(req.merchantId, "merchant_id");
      const rows = await listShops(sql, { merchantId, query: req.query.trim() }, pageOf(req.after, req.limit));
      return { shops: rows.map(shopWire) };
    },

    async getShop(req) {
      return { shop: shopWire(await shopOrNotFound(req.shopId)) };
    },

    async issueApiKey(req) {
      const shop = await shopOrNotFound(req.shopId);
      const label = req.label.trim().slice(0, 200);
      const { plaintext, prefix } = generateApiKey();
      const key = await insertApiKey(db, { shopId: shop.id, label, prefix, keyHash: hmacHex(apiKeyHashSecret, plaintext) });
      return { apiKey: apiKeyWire(key), plaintext };
    },

    async revokeApiKey(req) {
      const id = requireUuid(req.apiKeyId, "api_key_id");
      const key = await sql.$transaction(async (tx) => {
        // Row lock: two concurrent revokes publish one event and keep the first revocation time.
        const current = await lockApiKey(tx, id);
        if (!current) throw new AppError("not_found", "api key not found");
        if (current.revokedAt) return current;
        const revoked = await markApiKeyRevoked(tx, id);
        await enqueueApiKeyRevoked(tx, revoked);
        return revoked;
      });
      return { apiKey: apiKeyWire(key) };
    },

    async listApiKeys(req) {
      const shop = await shopOrNotFound(req.shopId);
      return { apiKeys: (await listApiKeys(db, shop.id)).map(apiKeyWire) };
    },

    async resolveApiKey(req) {
      const key = /^[0-9a-f]{64}$/.test(req.keyHash) ? await findApiKeyByHash(db, req.keyHash) : null;
      if (!key || key.revokedAt || !constantTimeEqual(key.keyHash, req.keyHash)) throw new AppError("not_found", "invalid api key");
      return { apiKeyId: key.id, merchantId: key.shop.merchantId, shopId: key.shopId, rateLimitRps: key.shop.rateLimitRps };
    },
  };
}
