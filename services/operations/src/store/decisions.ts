/** The record of decisions on operations: every cancel command, and who decided a review or a manual check. */
import { randomUUID } from "node:crypto";
import type { Tx } from "./db";

/** The outcome of the first cancel command of an operation, if any. */
export async function firstCancellation(tx: Tx, operationId: string): Promise<{ outcome: string } | null> {
  const row = await tx.selectFrom("cancellations").select("outcome").where("operationId", "=", operationId).orderBy("createdAt").limit(1).executeTakeFirst();
  return row ?? null;
}

/** Records a cancel command (the audit log of cancellations). */
export async function insertCancellation(tx: Tx, c: { operationId: string; reason: string; outcome: string }): Promise<void> {
  await tx.insertInto("cancellations").values({ id: randomUUID(), ...c }).execute();
}

/** Records who decided a review or manual-check outcome, and why. */
export async function insertAudit(tx: Tx, operationId: string, a: { action: string; actor: string; reason: string; detail: string }): Promise<void> {
  await tx.insertInto("operationAudit").values({ id: randomUUID(), operationId, ...a }).execute();
}
