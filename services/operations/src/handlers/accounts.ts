import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, constantTimeEqual, formatAmount, hmacHex, isCurrency, type Money, requireUuid } from "@pgw/kit";
import { AccountsService, type ShopSettings } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { randomUUID } from "node:crypto";
import { generateApiKey } from "../domain/api-key";
import { overdraftLimitOf, validateShopSettings, type ShopSettingsInput } from "../domain/shop-settings";
import { enqueueApiKeyRevoked, enqueueShopChanged } from "../events";
import type { ApiKeyRow, Db, MerchantRow, ShopRow } from "../store";

export interface AccountsDeps {
  db: Db;
  /** Secret of the keyed hash under which API keys are stored. */
  apiKeyHashSecret: string;
  /** Local mode accepts plain-HTTP webhook URLs. */
  localMode: boolean;
}

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

function shopData(input: ShopSettingsInput) {
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
export function accountsHandlers({ db, apiKeyHashSecret, localMode }: AccountsDeps): Partial<ServiceImpl<typeof AccountsService>> {
  const findShop = async (shopId: string) => {
    const shop = await db.shop.findUnique({ where: { id: requireUuid(shopId, "shop_id") } });
    if (!shop) throw new AppError("not_found", "shop not found");
    return shop;
  };

  return {
    async createMerchant(req) {
      const name = req.name.trim();
      if (!name || name.length > 200) throw new AppError("validation_error", "invalid merchant", [{ field: "name", issue: "must be 1-200 characters" }]);
      const merchant = await db.merchant.create({ data: { id: randomUUID(), name } });
      return { merchant: merchantWire(merchant) };
    },

    async createShop(req) {
      const merchantId = requireUuid(req.merchantId, "merchant_id");
      const input = { ...settingsInput(req.settings), name: req.name || req.settings?.name };
      validateShopSettings(input, true, localMode);
      const merchant = await db.merchant.findUnique({ where: { id: merchantId } });
      if (!merchant) throw new AppError("not_found", "merchant not found", [{ field: "merchant_id", issue: "no such merchant" }]);
      const shop = await db.$transaction(async (tx) => {
        const created = await tx.shop.create({ data: { id: randomUUID(), merchantId, ...shopData(input), name: input.name!.trim() } });
        await enqueueShopChanged(tx, created);
        return created;
      });
      return { shop: shopWire(shop) };
    },

    async updateShop(req) {
      const input = settingsInput(req.settings);
      const shopId = requireUuid(req.shopId, "shop_id");
      const shop = await db.$transaction(async (tx) => {
        // Row lock: the settings are checked against the currency and limit this update replaces.
        const [current] = await tx.$queryRawUnsafe<{ settlement_currency: string; overdraft_limit: Money }[]>(
          `SELECT settlement_currency, overdraft_limit FROM shops WHERE id = $1::uuid FOR UPDATE`,
          shopId,
        );
        if (!current) throw new AppError("not_found", "shop not found");
        validateShopSettings(input, false, localMode, { settlementCurrency: current.settlement_currency, overdraftLimit: current.overdraft_limit });
        const updated = await tx.shop.update({ where: { id: shopId }, data: { ...shopData(input), updatedAt: new Date() } });
        await enqueueShopChanged(tx, updated);
        return updated;
      });
      return { shop: shopWire(shop) };
    },

    async getShop(req) {
      return { shop: shopWire(await findShop(req.shopId)) };
    },

    async issueApiKey(req) {
      const shop = await findShop(req.shopId);
      const label = req.label.trim().slice(0, 200);
      const { plaintext, prefix } = generateApiKey();
      const key = await db.apiKey.create({
        data: { id: randomUUID(), shopId: shop.id, label, prefix, keyHash: hmacHex(apiKeyHashSecret, plaintext) },
      });
      return { apiKey: apiKeyWire(key), plaintext };
    },

    async revokeApiKey(req) {
      const id = requireUuid(req.apiKeyId, "api_key_id");
      const key = await db.$transaction(async (tx) => {
        // Row lock: two concurrent revokes publish one event and keep the first revocation time.
        const rows = await tx.$queryRawUnsafe<{ id: string }[]>(`SELECT id FROM api_keys WHERE id = $1::uuid FOR UPDATE`, id);
        if (rows.length === 0) throw new AppError("not_found", "api key not found");
        const current = await tx.apiKey.findUniqueOrThrow({ where: { id } });
        if (current.revokedAt) return current;
        const revoked = await tx.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
        await enqueueApiKeyRevoked(tx, revoked);
        return revoked;
      });
      return { apiKey: apiKeyWire(key) };
    },

    async listApiKeys(req) {
      const shop = await findShop(req.shopId);
      const keys = await db.apiKey.findMany({ where: { shopId: shop.id }, orderBy: { createdAt: "asc" } });
      return { apiKeys: keys.map(apiKeyWire) };
    },

    async resolveApiKey(req) {
      const key = /^[0-9a-f]{64}$/.test(req.keyHash)
        ? await db.apiKey.findUnique({ where: { keyHash: req.keyHash }, include: { shop: true } })
        : null;
      if (!key || key.revokedAt || !constantTimeEqual(key.keyHash, req.keyHash)) throw new AppError("not_found", "invalid api key");
      return { apiKeyId: key.id, merchantId: key.shop.merchantId, shopId: key.shopId, rateLimitRps: key.shop.rateLimitRps };
    },
  };
}
