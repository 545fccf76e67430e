/** Providers and routes: configuration, read on every allocation and callback (through config-cache.ts). */
import { expressionBuilder, type Expression } from "kysely";
import { jsonBuildObject } from "kysely/helpers/postgres";
import type { DB } from "../generated/kysely/database";
import type { Route } from "../generated/prisma/client";
import type { Db, Queries } from "./index";

const providers = expressionBuilder<DB, "providers">();

/**
 * A provider as the statements that join one give it back (one JSON column, `provider`): what its
 * connector needs (handlers/deps.ts providerOf) and whether it is enabled. Only JSON-safe columns
 * (text, integer, boolean), so the object arrives as typed; usable wherever `providers` is joined.
 */
export const PROVIDER_JSON = jsonBuildObject({
  id: providers.ref("providers.id"),
  code: providers.ref("providers.code"),
  connector: providers.ref("providers.connector"),
  baseUrl: providers.ref("providers.baseUrl"),
  callbackSecret: providers.ref("providers.callbackSecret"),
  timeoutMs: providers.ref("providers.timeoutMs"),
  enabled: providers.ref("providers.enabled"),
});

/** A provider as stored (its `callbackSecret` sealed), with the columns PROVIDER_JSON carries. */
export type ProviderRow = typeof PROVIDER_JSON extends Expression<infer T> ? T : never;

/** The same columns read from `providers` itself. */
const PROVIDER_COLUMNS = ["id", "code", "connector", "baseUrl", "callbackSecret", "timeoutMs", "enabled"] as const satisfies readonly (keyof ProviderRow)[];

export function findProviderByCode(db: Queries, code: string): Promise<ProviderRow | undefined> {
  return db.selectFrom("providers").select(PROVIDER_COLUMNS).where("code", "=", code).executeTakeFirst();
}

/**
 * Routes of one type and method, every currency pair, with their providers; the domain decides which
 * fit, and why none does (another pair's routes tell an unserved currency from an unserved method).
 * One statement (the ORM's include took two).
 */
export function routesFor(db: Queries, q: { type: string; method: string }) {
  return db
    .selectFrom("routes")
    .innerJoin("providers", "providers.id", "routes.providerId")
    .selectAll("routes")
    .select(PROVIDER_JSON.as("provider"))
    .where("routes.type", "=", q.type)
    .where("routes.method", "=", q.method)
    .execute();
}

export type RouteWithProvider = Awaited<ReturnType<typeof routesFor>>[number];

/** Every route, for the admin API (configuration CRUD: the ORM). */
export function listRoutes(db: Db): Promise<Route[]> {
  return db.route.findMany({ orderBy: [{ type: "asc" }, { method: "asc" }, { currency: "asc" }, { settlementCurrency: "asc" }, { priority: "asc" }, { id: "asc" }] });
}
