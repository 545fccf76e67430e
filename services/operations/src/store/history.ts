/** What happened to an operation, for the admin timeline: its status changes and the decisions behind them. */
import type { Sql } from "./db";

/** Every status change of an operation, oldest first (the table a trigger on `operations` writes). */
export function statusChangesOf(db: Sql, operationId: string) {
  return db.selectFrom("statusChanges").select(["fromStatus", "toStatus", "changedAt"]).where("operationId", "=", operationId).orderBy("id").execute();
}

/** Who decided a review or a manual check of an operation, and why, oldest first. */
export function auditOf(db: Sql, operationId: string) {
  return db.selectFrom("operationAudit").select(["action", "actor", "reason", "createdAt"]).where("operationId", "=", operationId).orderBy("createdAt").execute();
}

/** The cancel command that cancelled an operation, if one did. */
export async function cancellingCommand(db: Sql, operationId: string): Promise<{ reason: string } | null> {
  const row = await db.selectFrom("cancellations").select("reason").where("operationId", "=", operationId).where("outcome", "=", "cancelled").orderBy("createdAt").limit(1).executeTakeFirst();
  return row ?? null;
}
