/**
 * Late funds: money a provider reported for an operation that had already ended without it, one
 * row per operation, open until an admin records what was done with it.
 */
import type { Selectable } from "kysely";
import { randomUUID } from "node:crypto";
import type { LateFunds } from "../generated/kysely/database";
import type { Sql, Tx } from "./db";
import type { OperationRow } from "./operations";

export type LateFundsRow = Selectable<LateFunds>;

/**
 * Records money a provider reported for an operation that had already ended without it; a repeated
 * report for the same operation adds nothing (unique operation_id). `amount` is a decimal string at
 * the operation's currency's scale. Answers whether it was new.
 */
export async function insertLateFunds(tx: Tx, row: OperationRow, amount: string): Promise<boolean> {
  const { numInsertedOrUpdatedRows } = await tx
    .insertInto("lateFunds")
    .values({ id: randomUUID(), operationId: row.id, shopId: row.shopId, operationType: row.type, operationStatus: row.status, amount, currency: row.currency })
    .onConflict((oc) => oc.column("operationId").doNothing())
    .executeTakeFirst();
  return (numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/** Late funds, newest first: of one shop or all, open (`resolved` false), resolved (true) or both. */
export function listLateFunds(db: Sql, filter: { shopId?: string; resolved?: boolean; limit: number }): Promise<LateFundsRow[]> {
  return db
    .selectFrom("lateFunds")
    .selectAll()
    .$if(filter.shopId !== undefined, (qb) => qb.where("shopId", "=", filter.shopId!))
    .$if(filter.resolved !== undefined, (qb) => qb.where("resolvedAt", filter.resolved ? "is not" : "is", null))
    .orderBy("reportedAt", "desc")
    .orderBy("id", "asc")
    .limit(filter.limit)
    .execute();
}

/**
 * Resolves open late funds once: the update matches only an open row, so two admins racing cannot
 * both resolve it. Answers the resolved row, or why not: `missing` (no such late funds) or `resolved` (already).
 */
export async function resolveLateFunds(db: Sql, id: string, resolution: { resolvedBy: string; note: string }): Promise<LateFundsRow | "missing" | "resolved"> {
  const resolved = await db
    .updateTable("lateFunds")
    .set({ resolvedAt: new Date(), ...resolution })
    .where("id", "=", id)
    .where("resolvedAt", "is", null)
    .returningAll()
    .executeTakeFirst();
  if (resolved) return resolved;
  const exists = await db.selectFrom("lateFunds").select("id").where("id", "=", id).executeTakeFirst();
  return exists ? "resolved" : "missing";
}
