/**
 * Allocations: one row per operation placed at a provider (or a `released` tombstone without one).
 * Each function is one statement. Status values the statements compare with are SQL literals, not
 * parameters: the partial index of active allocations (`WHERE status = 'active'`) can only serve a
 * statement whose text says `'active'`, and a prepared statement's generic plan sees no values.
 */
import { randomUUID } from "node:crypto";
import { changeWithEvent, type OutboxEvent } from "@pgw/kit/events";
import { currentTraceparent } from "@pgw/kit/runtime";
import { sql, type Insertable, type Selectable } from "kysely";
import type { DB } from "../generated/kysely/database";
import type { Queries, Tx } from "./index";
import { PROVIDER_JSON } from "./providers";

/** An allocation as stored (its `requisitesNumber` sealed). */
export type AllocationRow = Selectable<DB["allocations"]>;

const ACTIVE = sql.lit("active");
const RELEASED = sql.lit("released");

/** The operation's allocation (or tombstone) with its provider (null for a tombstone). */
export function findAllocation(db: Queries, operationId: string) {
  return db
    .selectFrom("allocations")
    .leftJoin("providers", "providers.id", "allocations.providerId")
    .selectAll("allocations")
    .select((eb) => eb.case().when("providers.id", "is not", null).then(PROVIDER_JSON).end().as("provider"))
    .where("allocations.operationId", "=", operationId)
    .executeTakeFirst();
}

export type AllocationWithProvider = NonNullable<Awaited<ReturnType<typeof findAllocation>>>;

/** Active allocations unchanged since `before`, least recently changed first (callbacks overdue). */
export function staleActiveAllocations(db: Queries, before: Date, limit: number) {
  return db
    .selectFrom("allocations")
    .innerJoin("providers", "providers.id", "allocations.providerId")
    .selectAll("allocations")
    .select(PROVIDER_JSON.as("provider"))
    .where("allocations.status", "=", ACTIVE)
    .where("allocations.updatedAt", "<", before)
    .orderBy("allocations.updatedAt")
    .limit(limit)
    .execute();
}

/** Marks an active allocation as looked at now, so it waits a whole age before it is asked again. */
export async function touchActiveAllocation(db: Queries, id: string): Promise<void> {
  await db.updateTable("allocations").set({ updatedAt: new Date() }).where("id", "=", id).where("status", "=", ACTIVE).execute();
}

/** Whether the operation has an allocation (or tombstone): one indexed probe, nothing read. */
export async function hasAllocation(db: Queries, operationId: string): Promise<boolean> {
  const row = await db.selectFrom("allocations").select(sql.lit(1).as("found")).where("operationId", "=", operationId).executeTakeFirst();
  return row !== undefined;
}

/** Fields of a new active allocation (the amount and rate as decimal strings at their scale). */
export type NewAllocation = Omit<Insertable<DB["allocations"]>, "id" | "status" | "traceparent" | "createdAt" | "updatedAt">;

/**
 * Inserts the operation's allocation unless it already has one (a tombstone or a concurrent
 * Allocate's): one statement, the unique operation_id decides. Resolves to the stored row when this
 * insert won, undefined otherwise. The row keeps the Allocate's trace context, which the
 * operation's provider callbacks continue.
 */
export function insertAllocation(db: Queries, data: NewAllocation): Promise<AllocationRow | undefined> {
  return db
    .insertInto("allocations")
    .values({ ...data, id: randomUUID(), status: "active", traceparent: currentTraceparent() })
    .onConflict((oc) => oc.column("operationId").doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Records a release before any allocation exists (a tombstone); false when a row was already there. */
export async function insertTombstone(db: Queries, operationId: string, reason: string): Promise<boolean> {
  const row = await db
    .insertInto("allocations")
    .values({ id: randomUUID(), operationId, status: "released", releaseReason: reason })
    .onConflict((oc) => oc.column("operationId").doNothing())
    .returning("id")
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Gives a tombstone the placement an Allocate made after the release (which it then cancels at the
 * provider), so a callback about that placement is still recognised: money paid before the
 * provider saw the cancel must reach operations, which records it as late funds. False when the
 * row is no tombstone (it already names a placement).
 */
export async function attachPlacementToTombstone(
  db: Queries,
  operationId: string,
  placement: { providerId: string; routeId: string; providerReference: string; type: string; currency: string },
): Promise<boolean> {
  // The type and currency let a callback about the placement be read (a completion's amount is checked against the currency's scale).
  const result = await db
    .updateTable("allocations")
    .set({ ...placement, updatedAt: new Date() })
    .where("operationId", "=", operationId)
    .where("status", "=", RELEASED)
    .where("providerReference", "is", null)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Marks an active allocation released; false when it was not active any more. */
export async function markReleased(db: Queries, operationId: string, reason: string): Promise<boolean> {
  const result = await db
    .updateTable("allocations")
    .set({ status: RELEASED, releaseReason: reason, updatedAt: new Date() })
    .where("operationId", "=", operationId)
    .where("status", "=", ACTIVE)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Locks the allocation a provider knows by its reference (FOR UPDATE, for the rest of `tx`) and reads it. */
export function lockAllocationByReference(tx: Queries, providerId: string, providerReference: string): Promise<AllocationRow | undefined> {
  return tx.selectFrom("allocations").selectAll().where("providerId", "=", providerId).where("providerReference", "=", providerReference).forUpdate().executeTakeFirst();
}

/**
 * Moves an allocation (locked by the caller in `tx`, as read there) to `status`, in one statement
 * with the provider update it reports: the allocation's next one, whose sequence `update` is given
 * to make the event with.
 */
export async function setAllocationStatus(
  tx: Tx,
  allocation: Pick<AllocationRow, "id" | "providerUpdates">,
  status: string,
  update: (sequence: number) => OutboxEvent,
): Promise<void> {
  const sequence = allocation.providerUpdates + 1;
  const moved = await changeWithEvent(
    tx,
    tx
      .updateTable("allocations")
      .set({ status, providerUpdates: sequence, updatedAt: new Date() })
      .where("id", "=", allocation.id)
      .where("providerUpdates", "=", allocation.providerUpdates)
      .returning("id"),
    update(sequence),
  );
  if (moved.length !== 1) throw new Error(`allocation ${allocation.id} not found, or its updates moved on since the caller locked it`);
}
