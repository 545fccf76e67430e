import type { Insertable, Selectable } from "kysely";
import type { Finding } from "../domain/findings";
import type { ReviewDecision } from "../domain/review";
import type { Confirmation } from "../generated/kysely/database";
import type { Queries } from "./index";

/** A confirmation upload as recorded, with its review (the outcome columns come from `decision`). */
export type ConfirmationRecord = Omit<Insertable<Confirmation>, "outcome" | "manualCheckReason" | "findings" | "appliedAt" | "createdAt"> & {
  decision: ReviewDecision;
  findings: Finding[];
};

/** Records a reviewed upload (before its outcome is applied, so the evidence of the review stays). */
export async function recordConfirmation(db: Queries, c: ConfirmationRecord): Promise<void> {
  const { decision, findings, ...rest } = c;
  await db
    .insertInto("confirmations")
    .values({
      ...rest,
      outcome: decision.outcome === "retry" ? null : decision.outcome,
      manualCheckReason: decision.outcome === "manual_check" ? decision.reason : null,
      findings: JSON.stringify(findings),
    })
    .execute();
}

/** Marks a confirmation's outcome as accepted by operations. */
export async function markApplied(db: Queries, id: string): Promise<void> {
  await db.updateTable("confirmations").set({ appliedAt: new Date() }).where("id", "=", id).execute();
}

/** An operation's uploads, oldest first, their findings parsed (for the console). */
export async function listConfirmations(db: Queries, operationId: string): Promise<(Omit<Selectable<Confirmation>, "findings"> & { findings: Finding[] })[]> {
  const rows = await db.selectFrom("confirmations").selectAll().where("operationId", "=", operationId).orderBy("createdAt").orderBy("id").execute();
  return rows.map((r) => ({ ...r, findings: JSON.parse(r.findings) as Finding[] }));
}
