import type pg from "pg";
/** Prisma access of the routing unit. Rows stay here and in handlers' mappers; RPCs never return them. */
import { createPrismaClient, type DbClient, type SealedColumn, type SqlClient } from "@pgw/kit";
import { randomUUID } from "node:crypto";
import type { DefaultRoute } from "../domain/default-routes";
import { PrismaClient, type Allocation, type FxRate, type Prisma, type Provider, type Route } from "../generated/prisma/client";

/** The ORM client: route listings and seeding (cold paths). */
export type Db = PrismaClient;
/** The routing database on the kit's pg pool: allocations, callbacks, fx reads (hot paths). */
export type Sql = DbClient;
/** The columns this unit seals (kit data-keys.ts); re-sealed by DATA_RESEAL=only. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: "providers", column: "callback_secret" },
  { table: "allocations", column: "requisites_number" },
  { table: "provider_callbacks", column: "body" },
];

/** Rows as stored: a provider's `callbackSecret` and an allocation's `requisitesNumber` sealed. */
export type AllocationRow = Allocation;
export type ProviderRow = Provider;
export type RouteRow = Route;
export type RouteWithProvider = Route & { provider: Provider };
export type AllocationWithProvider = Allocation & { provider: Provider | null };

/** The routing database client (Prisma on the pg adapter). */
export function createDb(pool: pg.Pool): Db {
  return createPrismaClient(PrismaClient, pool);
}

// Hot paths read and write with SQL (one statement each) rather than the ORM, whose query compiler
// and result mapping cost more CPU than the query itself; the aliases give back the models' shapes
// (numeric columns arrive as Decimal, timestamptz as Date, like the ORM's).
const allocationColumns = (t: string) => `${t}.id::text AS "id", ${t}.operation_id::text AS "operationId",
  ${t}.provider_id::text AS "providerId", ${t}.route_id::text AS "routeId", ${t}.provider_reference AS "providerReference",
  ${t}.status AS "status", ${t}.type AS "type", ${t}.method AS "method", ${t}.amount AS "amount",
  ${t}.currency AS "currency", ${t}.settlement_currency AS "settlementCurrency", ${t}.requisites_number AS "requisitesNumber",
  ${t}.requisites_name AS "requisitesName", ${t}.requisites_bankname AS "requisitesBankname",
  ${t}.requires_receipt AS "requiresReceipt", ${t}.fx_source AS "fxSource", ${t}.fx_rate AS "fxRate",
  ${t}.expires_at AS "expiresAt", ${t}.release_reason AS "releaseReason", ${t}.created_at AS "createdAt",
  ${t}.updated_at AS "updatedAt"`;
const providerColumns = (t: string, prefix = "") => `${t}.id::text AS "${prefix}id", ${t}.code AS "${prefix}code", ${t}.name AS "${prefix}name",
  ${t}.connector AS "${prefix}connector", ${t}.base_url AS "${prefix}baseUrl", ${t}.callback_secret AS "${prefix}callbackSecret",
  ${t}.timeout_ms AS "${prefix}timeoutMs", ${t}.enabled AS "${prefix}enabled", ${t}.created_at AS "${prefix}createdAt"`;
const ALLOCATION_COLUMNS = allocationColumns("a");
const PROVIDER_COLUMNS = providerColumns("p");
/** Provider columns of a joined row carry this prefix (see withProvider). */
const JOINED = "provider.";
const JOINED_PROVIDER_COLUMNS = providerColumns("p", JOINED);

async function one<T>(db: SqlClient, query: string, ...values: unknown[]): Promise<T | null> {
  const rows = await db.$queryRawUnsafe<T[]>(query, ...values);
  return rows[0] ?? null;
}

/** A parameter as the driver takes it (dates as ISO text, Decimal-likes as their text). */
const param = (v: unknown): unknown => (v === undefined ? null : v instanceof Date ? v.toISOString() : v !== null && typeof v === "object" ? String(v) : v);

/** Splits a row joined with its provider (JOINED_PROVIDER_COLUMNS) into the row and the provider (null without one). */
function splitProvider<T>(row: Record<string, unknown>): T & { provider: Provider | null } {
  const own: Record<string, unknown> = {};
  const provider: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith(JOINED)) provider[key.slice(JOINED.length)] = value;
    else own[key] = value;
  }
  return { ...(own as T), provider: provider.id == null ? null : (provider as Provider) };
}

const withProvider = (row: Record<string, unknown>): AllocationWithProvider => splitProvider<Allocation>(row);

export async function findAllocation(db: SqlClient, operationId: string): Promise<AllocationWithProvider | null> {
  const row = await one<Record<string, unknown>>(
    db,
    `SELECT ${ALLOCATION_COLUMNS}, ${JOINED_PROVIDER_COLUMNS}
     FROM allocations a LEFT JOIN providers p ON p.id = a.provider_id WHERE a.operation_id = $1::uuid`,
    operationId,
  );
  return row && withProvider(row);
}

/** Active allocations unchanged since `before`, least recently changed first (callbacks overdue). */
export async function staleActiveAllocations(db: SqlClient, before: Date, limit: number): Promise<AllocationWithProvider[]> {
  const rows = await db.$queryRawUnsafe<Record<string, unknown>[]>(
    `SELECT ${ALLOCATION_COLUMNS}, ${JOINED_PROVIDER_COLUMNS}
     FROM allocations a JOIN providers p ON p.id = a.provider_id
     WHERE a.status = 'active' AND a.updated_at < $1::timestamptz ORDER BY a.updated_at LIMIT $2`,
    before.toISOString(),
    limit,
  );
  return rows.map(withProvider);
}

/** Marks an active allocation as looked at now, so it waits a whole age before it is asked again. */
export async function touchActiveAllocation(db: SqlClient, id: string): Promise<void> {
  await db.$executeRawUnsafe(`UPDATE allocations SET updated_at = $2::timestamptz WHERE id = $1::uuid AND status = 'active'`, id, new Date().toISOString());
}

/** Whether the operation has an allocation (or tombstone): one indexed probe, no ORM mapping. */
export async function hasAllocation(db: SqlClient, operationId: string): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM "allocations" WHERE "operation_id" = $1::uuid`, operationId);
  return rows.length > 0;
}

/**
 * Routes of one type and method, every currency pair, with their providers; the domain decides which
 * fit, and why none does (another pair's routes tell an unserved currency from an unserved method).
 */
export function routesFor(db: Db, q: { type: string; method: string }): Promise<RouteWithProvider[]> {
  const { type, method } = q;
  return db.route.findMany({ where: { type, method }, include: { provider: true } });
}

export function listRoutes(db: Db): Promise<RouteRow[]> {
  return db.route.findMany({ orderBy: [{ type: "asc" }, { method: "asc" }, { currency: "asc" }, { settlementCurrency: "asc" }, { priority: "asc" }, { id: "asc" }] });
}

/** The newest rate base → quote over every source. */
export function latestFxRate(db: SqlClient, base: string, quote: string): Promise<FxRate | null> {
  return one<FxRate>(
    db,
    `SELECT id::text, source, base_currency AS "baseCurrency", quote_currency AS "quoteCurrency", rate, created_at AS "createdAt"
     FROM fx_rates WHERE base_currency = $1 AND quote_currency = $2 ORDER BY created_at DESC, id ASC LIMIT 1`,
    base,
    quote,
  );
}

/** Fields of a new active allocation. */
export type NewAllocation = Omit<Prisma.AllocationUncheckedCreateInput, "id" | "status" | "createdAt" | "updatedAt">;

// Columns an allocation insert may set, with their SQL types (parameters are cast explicitly).
const INSERTABLE = {
  id: ["id", "uuid"],
  operationId: ["operation_id", "uuid"],
  providerId: ["provider_id", "uuid"],
  routeId: ["route_id", "uuid"],
  providerReference: ["provider_reference", "text"],
  status: ["status", "text"],
  type: ["type", "text"],
  method: ["method", "text"],
  amount: ["amount", "numeric"],
  currency: ["currency", "text"],
  settlementCurrency: ["settlement_currency", "text"],
  requisitesNumber: ["requisites_number", "text"],
  requisitesName: ["requisites_name", "text"],
  requisitesBankname: ["requisites_bankname", "text"],
  requiresReceipt: ["requires_receipt", "boolean"],
  fxSource: ["fx_source", "text"],
  fxRate: ["fx_rate", "numeric"],
  expiresAt: ["expires_at", "timestamptz"],
  releaseReason: ["release_reason", "text"],
} as const;

/**
 * Inserts an allocation row unless the operation already has one (one statement; the unique
 * operation_id decides). Fields left undefined take their column defaults. Resolves to the row as
 * stored, or null when another row was there first.
 */
async function insertAllocationRow(db: SqlClient, data: Prisma.AllocationUncheckedCreateInput): Promise<AllocationRow | null> {
  const columns: string[] = [];
  const placeholders: string[] = [];
  const values: unknown[] = [];
  for (const [field, value] of Object.entries(data)) {
    if (value === undefined) continue;
    const [column, type] = INSERTABLE[field as keyof typeof INSERTABLE];
    values.push(param(value));
    columns.push(column);
    placeholders.push(`$${values.length}::${type}`);
  }
  return one<AllocationRow>(
    db,
    `INSERT INTO allocations AS a (${columns.join(", ")}) VALUES (${placeholders.join(", ")}) ON CONFLICT (operation_id) DO NOTHING
     RETURNING ${ALLOCATION_COLUMNS}`,
    ...values,
  );
}

/**
 * Inserts the operation's allocation unless it already has one (a tombstone or a concurrent
 * Allocate's). Resolves to the stored row when this insert won, null otherwise.
 */
export function insertAllocation(db: SqlClient, data: NewAllocation): Promise<AllocationRow | null> {
  return insertAllocationRow(db, { ...data, id: randomUUID(), status: "active" });
}

/** Records a release before any allocation exists (a tombstone); false when a row was already there. */
export async function insertTombstone(db: SqlClient, operationId: string, reason: string): Promise<boolean> {
  return (await insertAllocationRow(db, { id: randomUUID(), operationId, status: "released", releaseReason: reason })) !== null;
}

/**
 * Gives a tombstone the placement an Allocate made after the release (which it then cancels at the
 * provider), so a callback about that placement is still recognised: money paid before the
 * provider saw the cancel must reach operations, which records it as late funds. False when the
 * row is no tombstone (it already names a placement).
 */
export async function attachPlacementToTombstone(
  db: SqlClient,
  operationId: string,
  placement: { providerId: string; routeId: string; providerReference: string; type: string; currency: string },
): Promise<boolean> {
  // The type and currency let a callback about the placement be read (a completion's amount is checked against the currency's scale).
  const count = await db.$executeRawUnsafe(
    `UPDATE allocations SET provider_id = $2::uuid, route_id = $3::uuid, provider_reference = $4, type = $5, currency = $6, updated_at = $7::timestamptz
      WHERE operation_id = $1::uuid AND status = 'released' AND provider_reference IS NULL`,
    operationId,
    placement.providerId,
    placement.routeId,
    placement.providerReference,
    placement.type,
    placement.currency,
    new Date().toISOString(),
  );
  return count === 1;
}

/** Marks an active allocation released; false when it was not active any more. */
export async function markReleased(db: SqlClient, operationId: string, reason: string): Promise<boolean> {
  const count = await db.$executeRawUnsafe(
    `UPDATE allocations SET status = 'released', release_reason = $2, updated_at = $3::timestamptz WHERE operation_id = $1::uuid AND status = 'active'`,
    operationId,
    reason,
    new Date().toISOString(),
  );
  return count === 1;
}

export function findProviderByCode(db: SqlClient, code: string): Promise<ProviderRow | null> {
  return one<ProviderRow>(db, `SELECT ${PROVIDER_COLUMNS} FROM providers p WHERE p.code = $1`, code);
}

/** Locks the allocation a provider knows by its reference (FOR UPDATE, for the rest of `tx`) and reads it. */
export function lockAllocationByReference(tx: SqlClient, providerId: string, providerReference: string): Promise<AllocationRow | null> {
  return one<AllocationRow>(tx, `SELECT ${ALLOCATION_COLUMNS} FROM allocations a WHERE a.provider_id = $1::uuid AND a.provider_reference = $2 FOR UPDATE`, providerId, providerReference);
}

/** Keeps a verified callback; false when this (provider, callback id) was recorded before. */
export async function recordCallback(
  tx: SqlClient,
  c: { providerId: string; callbackId: string; operationId: string; status: string; body: string },
): Promise<boolean> {
  const row = await one<{ id: string }>(
    tx,
    `INSERT INTO provider_callbacks (id, provider_id, callback_id, operation_id, status, body)
     VALUES ($1::uuid, $2::uuid, $3, $4::uuid, $5, $6)
     ON CONFLICT (provider_id, callback_id) DO NOTHING RETURNING id::text`,
    randomUUID(),
    c.providerId,
    c.callbackId,
    c.operationId,
    c.status,
    c.body,
  );
  return row !== null;
}

/** Moves an allocation (locked by the caller) to `status`. */
export async function setAllocationStatus(tx: SqlClient, id: string, status: string): Promise<void> {
  const count = await tx.$executeRawUnsafe(`UPDATE allocations SET status = $2, updated_at = $3::timestamptz WHERE id = $1::uuid`, id, status, new Date().toISOString());
  if (count !== 1) throw new Error(`allocation ${id} not found`);
}

// ---- seed -------------------------------------------------------------------------------------

/** Creates the provider or refreshes its connection settings (which come from configuration; the callback secret sealed). */
export async function upsertProvider(
  db: Db,
  p: { code: string; name: string; connector: string; baseUrl: string; callbackSecret: string; timeoutMs: number },
): Promise<string> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO "providers" ("id", "code", "name", "connector", "base_url", "callback_secret", "timeout_ms")
    VALUES (${randomUUID()}::uuid, ${p.code}, ${p.name}, ${p.connector}, ${p.baseUrl}, ${p.callbackSecret}, ${p.timeoutMs})
    ON CONFLICT ("code") DO UPDATE SET "base_url" = EXCLUDED."base_url", "callback_secret" = EXCLUDED."callback_secret",
      "timeout_ms" = EXCLUDED."timeout_ms", "connector" = EXCLUDED."connector"
    RETURNING "id"::text AS "id"`;
  return rows[0].id;
}

/**
 * Gives the provider the default routes when it has none (operators' edits survive restarts).
 * The provider row is locked, so replicas starting together seed once. Resolves to routes added.
 */
export function seedRoutesIfNone(db: Db, providerId: string, routes: DefaultRoute[]): Promise<number> {
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT 1 FROM "providers" WHERE "id" = ${providerId}::uuid FOR UPDATE`;
    if ((await tx.route.count({ where: { providerId } })) > 0) return 0;
    const { count } = await tx.route.createMany({ data: routes.map((r) => ({ ...r, id: randomUUID(), providerId })) });
    return count;
  });
}

/** Adds the rates a source lacks; existing rates are left as operators set them. */
export async function seedFxRates(db: Db, source: string, rates: readonly { base: string; quote: string; rate: string }[]): Promise<void> {
  await db.fxRate.createMany({
    data: rates.map((r) => ({ id: randomUUID(), source, baseCurrency: r.base, quoteCurrency: r.quote, rate: r.rate })),
    skipDuplicates: true,
  });
}

/** A provider create with an unknown outcome, to be checked at the provider from `firstCheckAt`. */
export async function recordUnsettledPlacement(db: Db, p: { operationId: string; providerId: string; type: string; firstCheckAt: Date }): Promise<void> {
  await db.unsettledPlacement.create({ data: { id: randomUUID(), operationId: p.operationId, providerId: p.providerId, type: p.type, nextCheckAt: p.firstCheckAt } });
}

export interface UnsettledPlacementRow {
  id: string;
  operationId: string;
  providerId: string;
  type: string;
  checks: number;
  provider: Provider;
}

/**
 * Claims up to `limit` unsettled placements that are due, earliest first, with their providers:
 * their next check moves `leaseMs` ahead, so other replicas' passes skip them meanwhile (and rows
 * another claim is taking are skipped, not waited for). The pass then reschedules or settles each.
 */
export async function claimDueUnsettledPlacements(db: SqlClient, limit: number, leaseMs: number): Promise<UnsettledPlacementRow[]> {
  const rows = await db.$queryRawUnsafe<Record<string, unknown>[]>(
    `WITH due AS (
       SELECT id FROM unsettled_placements WHERE settled_at IS NULL AND next_check_at <= now()
       ORDER BY next_check_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     UPDATE unsettled_placements u SET next_check_at = now() + $2::int * interval '1 millisecond'
     FROM due, providers p WHERE u.id = due.id AND p.id = u.provider_id
     RETURNING u.id::text AS "id", u.operation_id::text AS "operationId", u.provider_id::text AS "providerId", u.type, u.checks, ${JOINED_PROVIDER_COLUMNS}`,
    limit,
    leaseMs,
  );
  return rows.map((row) => splitProvider<UnsettledPlacementRow>(row));
}

/** Records a check that settled nothing; the next one is due at `nextCheckAt`. */
export async function rescheduleUnsettledPlacement(db: Db, id: string, checks: number, nextCheckAt: Date): Promise<void> {
  await db.unsettledPlacement.update({ where: { id }, data: { checks, nextCheckAt } });
}

/** Settles a placement with what became of it. */
export async function settleUnsettledPlacement(db: Db, id: string, checks: number, outcome: string): Promise<void> {
  await db.unsettledPlacement.update({ where: { id }, data: { checks, outcome, settledAt: new Date() } });
}
