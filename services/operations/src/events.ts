import { create, toBinary } from "@bufbuild/protobuf";
import { enqueueEvent, type SqlClient } from "@pgw/kit";
import { ApiKeyRevokedSchema, ShopChangedSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { randomUUID } from "node:crypto";
import type { ApiKeyRow, ShopRow } from "./store";

/** Subjects this service publishes (stream PGW). */
export const SUBJECTS = {
  apiKeyRevoked: "pgw.accounts.api_key_revoked",
  shopChanged: "pgw.accounts.shop_changed",
} as const;

/** Outbox row announcing a revoked key, so every gateway replica evicts it from its cache. */
export function enqueueApiKeyRevoked(tx: SqlClient, key: ApiKeyRow): Promise<string> {
  const eventId = randomUUID();
  const payload = create(ApiKeyRevokedSchema, {
    eventId,
    apiKeyId: key.id,
    keyHash: key.keyHash,
    shopId: key.shopId,
    occurredAt: (key.revokedAt ?? new Date()).toISOString(),
  });
  return enqueueEvent(tx, SUBJECTS.apiKeyRevoked, toBinary(ApiKeyRevokedSchema, payload), eventId);
}

/** Outbox row carrying the shop settings that other services keep a copy of. */
export function enqueueShopChanged(tx: SqlClient, shop: ShopRow): Promise<string> {
  const eventId = randomUUID();
  const payload = create(ShopChangedSchema, {
    eventId,
    shopId: shop.id,
    merchantId: shop.merchantId,
    webhookUrl: shop.webhookUrl ?? undefined,
    settlementCurrency: shop.settlementCurrency,
    overdraftLimit: shop.overdraftLimit.toFixed(6),
    rateLimitRps: shop.rateLimitRps,
    occurredAt: shop.updatedAt.toISOString(),
  });
  return enqueueEvent(tx, SUBJECTS.shopChanged, toBinary(ShopChangedSchema, payload), eventId);
}
