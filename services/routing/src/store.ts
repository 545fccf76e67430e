/** Prisma access of the routing unit. Rows stay here and in handlers' mappers; RPCs never return them. */
import { createPrismaClient } from "@pgw/kit";
import { randomUUID } from "node:crypto";
import type { DefaultRoute } from "./domain/default-routes";
import { PrismaClient, type Allocation, type Prisma, type Provider, type Route } from "./generated/prisma/client";

export type Db = PrismaClient;
export type Tx = Prisma.TransactionClient;
export type AllocationRow = Allocation;
export type ProviderRow = Provider;
export type RouteRow = Route;
export type RouteWithProvider = Route & { provider: Provider };
export type AllocationWithProvider = Allocation & { provider: Provider | null };

/** The routing database client (Prisma on the pg adapter). */
export function createDb(url: string): Db {
  return createPrismaClient(PrismaClient, url);
}

export function findAllocation(db: Db | Tx, operationId: string): Promise<AllocationWithProvider | null> {
  return db.allocation.findUnique({ where: { operationId }, include: { provider: true } });
}

/** Whether the operation has an allocation (or tombstone): one indexed probe, no ORM mapping. */
export async function hasAllocation(db: Db, operationId: string): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM "allocations" WHERE "operation_id" = $1::uuid`, operationId);
  return rows.length > 0;
}

/** Routes of one (type, method, currency pair), with their providers; the domain decides which fit. */
export function routesFor(db: Db, q: { type: string; method: string; currency: string; settlementCurrency: string }): Promise<RouteWithProvider[]> {
  const { type, method, currency, settlementCurrency } = q;
  return db.route.findMany({ where: { type, method, currency, settlementCurrency }, include: { provider: true } });
}

export function listRoutes(db: Db): Promise<RouteRow[]> {
  return db.route.findMany({ orderBy: [{ type: "asc" }, { method: "asc" }, { currency: "asc" }, { settlementCurrency: "asc" }, { priority: "asc" }, { id: "asc" }] });
}

/** The newest rate base → quote over every source. */
export function latestFxRate(db: Db, base: string, quote: string) {
  return db.fxRate.findFirst({ where: { baseCurrency: base, quoteCurrency: quote }, orderBy: [{ createdAt: "desc" }, { id: "asc" }] });
}

/** Fields of a new active allocation. */
export type NewAllocation = Omit<Prisma.AllocationUncheckedCreateInput, "id" | "status" | "createdAt" | "updatedAt">;

/**
 * Inserts the operation's allocation unless it already has one (a tombstone or a concurrent
 * Allocate's). Resolves to whether this insert won.
 */
export async function insertAllocation(db: Db, data: NewAllocation): Promise<boolean> {
  const { count } = await db.allocation.createMany({ data: [{ ...data, id: randomUUID(), status: "active" }], skipDuplicates: true });
  return count === 1;
}

/** Records a release before any allocation exists (a tombstone); false when a row was already there. */
export async function insertTombstone(db: Db, operationId: string, reason: string): Promise<boolean> {
  const { count } = await db.allocation.createMany({
    data: [{ id: randomUUID(), operationId, status: "released", releaseReason: reason }],
    skipDuplicates: true,
  });
  return count === 1;
}

/** Marks an active allocation released; false when it was not active any more. */
export async function markReleased(db: Db, operationId: string, reason: string): Promise<boolean> {
  const { count } = await db.allocation.updateMany({
    where: { operationId, status: "active" },
    data: { status: "released", releaseReason: reason, updatedAt: new Date() },
  });
  return count === 1;
}

export function findProviderByCode(db: Db, code: string): Promise<ProviderRow | null> {
  return db.provider.findUnique({ where: { code } });
}

export function findAllocationByReference(db: Db, providerId: string, providerReference: string): Promise<AllocationRow | null> {
  return db.allocation.findUnique({ where: { providerId_providerReference: { providerId, providerReference } } });
}

/** Keeps a verified callback; false when this (provider, callback id) was recorded before. */
export async function recordCallback(
  tx: Tx,
  c: { providerId: string; callbackId: string; operationId: string; status: string; body: string },
): Promise<boolean> {
  const { count } = await tx.providerCallback.createMany({ data: [{ id: randomUUID(), ...c }], skipDuplicates: true });
  return count === 1;
}

/** Locks the allocation row for the rest of the transaction and answers its current status. */
export async function lockAllocation(tx: Tx, id: string): Promise<string | undefined> {
  const rows = await tx.$queryRaw<{ status: string }[]>`SELECT "status" FROM "allocations" WHERE "id" = ${id}::uuid FOR UPDATE`;
  return rows[0]?.status;
}

export async function setAllocationStatus(tx: Tx, id: string, status: string): Promise<void> {
  await tx.allocation.update({ where: { id }, data: { status, updatedAt: new Date() } });
}

// ---- seed -------------------------------------------------------------------------------------

/** Creates the provider or refreshes its connection settings (which come from configuration). */
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
