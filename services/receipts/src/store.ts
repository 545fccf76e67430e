import { createPrismaClient, Money } from "@pgw/kit";
import type { EvidenceItemDraft, MaterialisedStatus } from "./domain/evidence";
import type { Finding } from "./domain/findings";
import type { ReviewDecision } from "./domain/review";
import { PrismaClient } from "./generated/prisma/client";

export type Db = PrismaClient;

/** The receipts database client (Prisma on the pg adapter). */
export function createDb(url: string): Db {
  return createPrismaClient(PrismaClient, url);
}

/** A confirmation upload as recorded, with its review. */
export interface ConfirmationRecord {
  id: string;
  operationId: string;
  shopId: string;
  confirmationType: string;
  fileId: string;
  filename: string;
  contentType: string;
  declaredType: string;
  decision: ReviewDecision;
  findings: Finding[];
}

/** Records a reviewed upload (before its outcome is applied, so the evidence of the review stays). */
export async function recordConfirmation(db: Db, c: ConfirmationRecord): Promise<void> {
  const { decision, findings, ...rest } = c;
  await db.confirmation.create({
    data: {
      ...rest,
      outcome: decision.outcome === "retry" ? null : decision.outcome,
      manualCheckReason: decision.outcome === "manual_check" ? decision.reason : null,
      findings: JSON.stringify(findings),
    },
  });
}

/** Marks a confirmation's outcome as accepted by operations. */
export async function markApplied(db: Db, id: string): Promise<void> {
  await db.confirmation.update({ where: { id }, data: { appliedAt: new Date() } });
}

/** An operation's uploads, oldest first (for the console). */
export async function listConfirmations(db: Db, operationId: string) {
  const rows = await db.confirmation.findMany({ where: { operationId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows.map((r) => ({ ...r, findings: JSON.parse(r.findings) as Finding[] }));
}

/** A stored evidence item. */
export interface EvidenceItemRow {
  id: string;
  operationId: string;
  amount: Money;
  completedAt: Date;
  legacy: boolean;
  hasFile: boolean;
  fileId: string | null;
  providerItemId: string | null;
}

/** An operation's materialised evidence; null when it was never materialised. */
// Every get_operation_state of a completed operation reads this: one statement, no ORM mapping.
export async function readEvidence(db: Db, operationId: string): Promise<{ status: MaterialisedStatus; items: EvidenceItemRow[] } | null> {
  const rows = await db.$queryRawUnsafe<(Parameters<typeof toItemRow>[0] & { status: string; id: string | null })[]>(
    `SELECT s.status, i.id::text, i.operation_id::text AS "operationId", i.amount, i.completed_at AS "completedAt", i.legacy,
            i.has_file AS "hasFile", i.file_id::text AS "fileId", i.provider_item_id AS "providerItemId"
       FROM evidence_states s LEFT JOIN evidence_items i ON i.operation_id = s.operation_id
      WHERE s.operation_id = $1::uuid
      ORDER BY i.completed_at, i.id`,
    operationId,
  );
  if (rows.length === 0) return null;
  return { status: rows[0].status as MaterialisedStatus, items: rows.filter((r) => r.id !== null).map(toItemRow) };
}

const toItemRow = (r: { id: string; operationId: string; amount: { toString(): string }; completedAt: Date; legacy: boolean; hasFile: boolean; fileId: string | null; providerItemId: string | null }): EvidenceItemRow => ({
  id: r.id,
  operationId: r.operationId,
  amount: new Money(r.amount.toString()),
  completedAt: r.completedAt,
  legacy: r.legacy,
  hasFile: r.hasFile,
  fileId: r.fileId,
  providerItemId: r.providerItemId,
});

/**
 * Stores materialised evidence once: items have stable ids and the state row is the operation's
 * primary key, so a concurrent or repeated materialisation (event and on-demand read) changes
 * nothing the first one wrote.
 */
export async function saveEvidence(db: Db, operationId: string, status: MaterialisedStatus, items: EvidenceItemDraft[]): Promise<void> {
  await db.$transaction([
    db.evidenceItem.createMany({
      data: items.map((i) => ({
        id: i.id,
        operationId,
        legId: i.legId,
        amount: i.amount.toFixed(),
        completedAt: i.completedAt,
        legacy: i.legacy,
        hasFile: i.hasFile,
        providerItemId: i.providerItemId,
      })),
      skipDuplicates: true,
    }),
    db.evidenceState.createMany({ data: [{ operationId, status }], skipDuplicates: true }),
  ]);
}

/** One evidence item by its public id. */
export async function findEvidenceItem(db: Db, id: string): Promise<EvidenceItemRow | null> {
  const row = await db.evidenceItem.findUnique({ where: { id } });
  return row && toItemRow(row);
}

/** Remembers where an item's provider file was cached. */
export async function setItemFile(db: Db, id: string, fileId: string): Promise<void> {
  await db.evidenceItem.updateMany({ where: { id, fileId: null }, data: { fileId } });
}
