import type pg from "pg";
import { createPrismaClient, Money, type SqlClient } from "@pgw/kit";
import type { EvidenceItemDraft, MaterialisedStatus } from "./domain/evidence";
import type { Finding } from "./domain/findings";
import type { ReviewDecision } from "./domain/review";
import { PrismaClient } from "./generated/prisma/client";

/** The ORM client: confirmation uploads and stored files. */
export type Db = PrismaClient;

/** The receipts database client (Prisma on the pg adapter). */
export function createDb(pool: pg.Pool): Db {
  return createPrismaClient(PrismaClient, pool);
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

/**
 * Claims the review of an operation's upload for `holder` for `ms`: false while another review, in
 * any replica, holds an unexpired claim. A claim left by a crashed process is taken over once expired.
 */
export async function claimReview(db: SqlClient, operationId: string, holder: string, ms: number): Promise<boolean> {
  const claimed = await db.$queryRawUnsafe<unknown[]>(
    `INSERT INTO review_leases (operation_id, holder, expires_at) VALUES ($1::uuid, $2::uuid, now() + $3::int * interval '1 millisecond')
     ON CONFLICT (operation_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
     WHERE review_leases.expires_at < now()
     RETURNING 1`,
    operationId,
    holder,
    ms,
  );
  return claimed.length === 1;
}

/** Ends `holder`'s claim on the operation's review (a claim taken over meanwhile stays). */
export async function releaseReview(db: SqlClient, operationId: string, holder: string): Promise<void> {
  await db.$executeRawUnsafe(`DELETE FROM review_leases WHERE operation_id = $1::uuid AND holder = $2::uuid`, operationId, holder);
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

// Columns of an evidence item (alias `i`) in the shape `toItemRow` takes.
const ITEM_COLUMNS = `i.id::text, i.operation_id::text AS "operationId", i.amount, i.completed_at AS "completedAt", i.legacy,
  i.has_file AS "hasFile", i.file_id::text AS "fileId", i.provider_item_id AS "providerItemId"`;

/** An operation's materialised evidence; null when it was never materialised. */
// Every get_operation_state of a completed operation reads this: one statement, no ORM mapping.
export async function readEvidence(db: SqlClient, operationId: string): Promise<{ status: MaterialisedStatus; items: EvidenceItemRow[] } | null> {
  const rows = await db.$queryRawUnsafe<(Parameters<typeof toItemRow>[0] & { status: string; id: string | null })[]>(
    `SELECT s.status, ${ITEM_COLUMNS}
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
 * nothing the first one wrote. One statement (items and state together, atomically). Answers the
 * evidence as stored when this call stored it, so the caller needs no read back; null when an
 * earlier materialisation had (then read what it stored).
 */
export async function saveEvidence(db: SqlClient, operationId: string, status: MaterialisedStatus, items: EvidenceItemDraft[]): Promise<{ status: MaterialisedStatus; items: EvidenceItemRow[] } | null> {
  const rows = await db.$queryRawUnsafe<unknown[]>(
    `WITH i AS (
       INSERT INTO evidence_items (id, operation_id, leg_id, amount, completed_at, legacy, has_file, provider_item_id)
       SELECT t.id, $1::uuid, t.leg_id, t.amount, t.completed_at, t.legacy, t.has_file, t.provider_item_id
         FROM unnest($3::uuid[], $4::text[], $5::numeric[], $6::timestamptz[], $7::boolean[], $8::boolean[], $9::text[])
              WITH ORDINALITY AS t(id, leg_id, amount, completed_at, legacy, has_file, provider_item_id, n)
        ORDER BY t.n
       ON CONFLICT DO NOTHING),
     s AS (INSERT INTO evidence_states (operation_id, status) VALUES ($1::uuid, $2) ON CONFLICT DO NOTHING RETURNING 1)
     SELECT 1 FROM s`,
    operationId,
    status,
    items.map((i) => i.id),
    items.map((i) => i.legId),
    items.map((i) => i.amount.toFixed()),
    items.map((i) => i.completedAt.toISOString()),
    items.map((i) => i.legacy),
    items.map((i) => i.hasFile),
    items.map((i) => i.providerItemId),
  );
  if (rows.length === 0) return null;
  const stored = items.map((i): EvidenceItemRow => ({ id: i.id, operationId, amount: i.amount, completedAt: i.completedAt, legacy: i.legacy, hasFile: i.hasFile, fileId: null, providerItemId: i.providerItemId }));
  // readEvidence's order (completed_at, id); ids are lowercase hex, so text order is uuid order.
  stored.sort((a, b) => a.completedAt.getTime() - b.completedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { status, items: stored };
}

/** One evidence item by its public id. */
export async function findEvidenceItem(db: SqlClient, id: string): Promise<EvidenceItemRow | null> {
  const rows = await db.$queryRawUnsafe<Parameters<typeof toItemRow>[0][]>(`SELECT ${ITEM_COLUMNS} FROM evidence_items i WHERE i.id = $1::uuid`, id);
  return rows[0] ? toItemRow(rows[0]) : null;
}

/** Remembers where an item's provider file was cached. */
export async function setItemFile(db: SqlClient, id: string, fileId: string): Promise<void> {
  await db.$executeRawUnsafe(`UPDATE evidence_items SET file_id = $2::uuid WHERE id = $1::uuid AND file_id IS NULL`, id, fileId);
}
