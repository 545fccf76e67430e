/**
 * Merchants, shops and API keys. Reads and writes that publish nothing stay on Prisma Client (cold
 * configuration CRUD); a change that writes an event (ShopChanged, ApiKeyRevoked) runs in a kit
 * transaction with that event, on Kysely.
 */
import { isUuid } from "@pgw/contracts";
import type { ExpressionBuilder, Selectable, Updateable } from "kysely";
import { randomUUID } from "node:crypto";
import type { ApiKey, DB, Merchant, Shop } from "../generated/kysely/database";
import type { Db, Sql, Tx } from "./db";
import { afterCursor, containsPattern, type Page } from "./paging";

export type MerchantRow = Selectable<Merchant>;
export type ShopRow = Selectable<Shop>;
export type ApiKeyRow = Selectable<ApiKey>;
/** A shop's settings as stored: amounts as decimal strings at the column's scale (overdraft limit: 6 places). */
export type ShopSettingsChange = Omit<Updateable<Shop>, "id" | "merchantId" | "createdAt" | "updatedAt">;

export function createMerchant(db: Db, name: string) {
  return db.merchant.create({ data: { id: randomUUID(), name } });
}

export async function merchantExists(db: Db, id: string): Promise<boolean> {
  return (await db.merchant.findUnique({ where: { id }, select: { id: true } })) !== null;
}

export function findShop(db: Db, id: string) {
  return db.shop.findUnique({ where: { id } });
}

/** Stores a new shop in `tx` and answers it as stored. */
export function insertShop(tx: Tx, merchantId: string, settings: ShopSettingsChange & { name: string }): Promise<ShopRow> {
  return tx
    .insertInto("shops")
    .values({ id: randomUUID(), merchantId, ...settings })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Locks a shop for the rest of `tx` and reads what its new settings are checked against; null when there is no such shop. */
export async function lockShopSettings(tx: Tx, id: string) {
  return (await tx.selectFrom("shops").select(["settlementCurrency", "overdraftLimit"]).where("id", "=", id).forUpdate().executeTakeFirst()) ?? null;
}

/** Changes a shop locked in `tx` and answers it as stored. */
export function updateShop(tx: Tx, id: string, settings: ShopSettingsChange): Promise<ShopRow> {
  return tx
    .updateTable("shops")
    .set({ ...settings, updatedAt: new Date() })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function insertApiKey(db: Db, key: { shopId: string; label: string; prefix: string; keyHash: string }) {
  return db.apiKey.create({ data: { id: randomUUID(), ...key } });
}

/** Locks an API key for the rest of `tx` and reads it; null when there is no such key. */
export async function lockApiKey(tx: Tx, id: string): Promise<ApiKeyRow | null> {
  return (await tx.selectFrom("apiKeys").selectAll().where("id", "=", id).forUpdate().executeTakeFirst()) ?? null;
}

/** Marks an API key locked in `tx` revoked now, and answers it as stored. */
export function markApiKeyRevoked(tx: Tx, id: string): Promise<ApiKeyRow> {
  return tx.updateTable("apiKeys").set({ revokedAt: new Date() }).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}

export function listApiKeys(db: Db, shopId: string) {
  return db.apiKey.findMany({ where: { shopId }, orderBy: { createdAt: "asc" } });
}

/** The key stored under `keyHash`, with its shop. */
export function findApiKeyByHash(db: Db, keyHash: string) {
  return db.apiKey.findUnique({ where: { keyHash }, include: { shop: true } });
}

/** A name filter of the admin listings: the id itself when `query` is a UUID, else part of the name in any case. */
function matchesQuery(query: string) {
  return (eb: ExpressionBuilder<DB, "merchants" | "shops">) =>
    isUuid(query) ? eb("id" as never, "=", query.toLowerCase() as never) : eb("name" as never, "ilike", containsPattern(query) as never);
}

/** Merchants newest first, optionally matching `query` (see {@link matchesQuery}). */
export function listMerchants(sql: Sql, query: string, page: Page): Promise<MerchantRow[]> {
  return sql
    .selectFrom("merchants")
    .selectAll()
    .$if(query !== "", (qb) => qb.where(matchesQuery(query)))
    .$if(page.after !== null, (qb) => qb.where(afterCursor<"merchants">(page.after!)))
    .orderBy("createdAt", "desc")
    .orderBy("id", "desc")
    .limit(page.limit)
    .execute();
}

/** Shops newest first, of one merchant or all, optionally matching `query` (see {@link matchesQuery}). */
export function listShops(sql: Sql, filter: { merchantId?: string; query: string }, page: Page): Promise<ShopRow[]> {
  return sql
    .selectFrom("shops")
    .selectAll()
    .$if(filter.merchantId !== undefined, (qb) => qb.where("merchantId", "=", filter.merchantId!))
    .$if(filter.query !== "", (qb) => qb.where(matchesQuery(filter.query)))
    .$if(page.after !== null, (qb) => qb.where(afterCursor<"shops">(page.after!)))
    .orderBy("createdAt", "desc")
    .orderBy("id", "desc")
    .limit(page.limit)
    .execute();
}
