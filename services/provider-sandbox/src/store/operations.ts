import { formatExact, type Money } from "@pgw/contracts";
import { sql, type Selectable } from "kysely";
import type { PlannedLeg } from "../domain/evidence";
import type { Method } from "../domain/methods";
import type { OperationKind, OperationStatus } from "../domain/operation-state";
import type { ReceiptFacts } from "../domain/receipt-pdf";
import type { Requisites } from "../domain/requisites";
import type { EvidenceMode } from "../domain/scenario";
import type { SandboxOperation } from "../generated/kysely/database";
import type { Queries } from "./index";

/** The columns of an operation every read answers. */
const OPERATION_COLUMNS = [
  "reference",
  "operationId",
  "kind",
  "method",
  "amount",
  "currency",
  "status",
  "paidAmount",
  "requisites",
  "requiresReceipt",
  "callbackUrl",
  "evidence",
  "expiresAt",
  "createdAt",
] as const;
type OperationRow = Pick<Selectable<SandboxOperation>, (typeof OPERATION_COLUMNS)[number]>;

/**
 * An operation as the sandbox knows it: its row, with the columns the schema keeps as text read as
 * what they hold (`requisites`: the requisites handed out, payin, or the destination, payout).
 */
export type StoredOperation = Omit<OperationRow, "kind" | "method" | "status" | "evidence" | "requisites"> & {
  kind: OperationKind;
  method: Method;
  status: OperationStatus;
  evidence: EvidenceMode;
  requisites: Requisites;
};

const toOperation = (row: OperationRow): StoredOperation => ({
  ...row,
  kind: row.kind as OperationKind,
  method: row.method as Method,
  status: row.status as OperationStatus,
  evidence: row.evidence as EvidenceMode,
  requisites: JSON.parse(row.requisites) as Requisites,
});

/** What a create stores; the operation starts `created`. */
export type NewOperation = Omit<StoredOperation, "status" | "paidAmount" | "evidence" | "createdAt">;

/** A status change, with what a pay / settle adds. */
export interface Completion {
  to: OperationStatus;
  paidAmount?: Money;
  evidence?: EvidenceMode;
  legs?: PlannedLeg[];
}

/** An evidence item as read back, without its file. */
export interface StoredItem {
  id: string;
  amount: Money;
  completedAt: Date;
  hasFile: boolean;
}

/** A leg as read back with its items. */
export interface StoredLeg {
  id: string;
  amount: Money;
  completedAt: Date;
  legacy: boolean;
  items: StoredItem[];
}

/** Statements on the sandbox's operations, their legs and evidence items (one each). */
export function operationStore(db: Queries) {
  const byOperationId = async (operationId: string): Promise<StoredOperation | null> => {
    const row = await db.selectFrom("sandboxOperations").select(OPERATION_COLUMNS).where("operationId", "=", operationId).executeTakeFirst();
    return row ? toOperation(row) : null;
  };

  return {
    byOperationId,

    async byReference(reference: string): Promise<StoredOperation | null> {
      const row = await db.selectFrom("sandboxOperations").select(OPERATION_COLUMNS).where("reference", "=", reference).executeTakeFirst();
      return row ? toOperation(row) : null;
    },

    /** Inserts the operation; when its operation_id exists already, answers the stored one. */
    async create(op: NewOperation): Promise<{ operation: StoredOperation; created: boolean }> {
      const inserted = await db
        .insertInto("sandboxOperations")
        .values({
          reference: op.reference,
          operationId: op.operationId,
          kind: op.kind,
          method: op.method,
          amount: op.amount.toFixed(2),
          currency: op.currency,
          status: "created",
          requisites: JSON.stringify(op.requisites),
          requiresReceipt: op.requiresReceipt,
          callbackUrl: op.callbackUrl,
          expiresAt: op.expiresAt,
        })
        .onConflict((oc) => oc.column("operationId").doNothing())
        .returning(OPERATION_COLUMNS)
        .executeTakeFirst();
      if (inserted) return { operation: toOperation(inserted), created: true };
      const existing = await byOperationId(op.operationId);
      if (!existing) throw new Error(`operation ${op.operationId} conflicted on insert but cannot be read back`);
      return { operation: existing, created: false };
    },

    /**
     * Moves a `created` operation to `change.to` with its legs and receipts, in one statement (so
     * one transaction). The update is conditional on `created` (compare-and-set), so of two racing
     * changes one wins; answers false for the loser (and then nothing is inserted).
     */
    async complete(reference: string, change: Completion): Promise<boolean> {
      const legs = change.legs ?? [];
      const items = legs.flatMap((leg) => leg.items.map((item, position) => ({ ...item, legId: leg.id, position })));
      // Legs and items as one array parameter per column, inserted only when the update won (FROM u).
      const legRows = sql<{ id: string; position: number; amount: string; legacy: boolean; completedAt: Date }>`unnest(${legs.map((l) => l.id)}::uuid[], ${legs.map((l) => l.position)}::int[], ${legs.map((l) => l.amount.toFixed())}::numeric[], ${legs.map((l) => l.legacy)}::boolean[], ${legs.map((l) => l.completedAt.toISOString())}::timestamptz[])`.as<"t">(
        sql`t(id, position, amount, legacy, completed_at)`,
      );
      const itemRows = sql<{ id: string; legId: string; position: number; amount: string; completedAt: Date }>`unnest(${items.map((i) => i.id)}::uuid[], ${items.map((i) => i.legId)}::uuid[], ${items.map((i) => i.position)}::int[], ${items.map((i) => i.amount.toFixed())}::numeric[], ${items.map((i) => i.completedAt.toISOString())}::timestamptz[])`.as<"t">(
        sql`t(id, leg_id, position, amount, completed_at)`,
      );
      const updated = await db
        .with("u", (qc) =>
          qc
            .updateTable("sandboxOperations")
            .set((eb) => ({
              status: change.to,
              // The column read (Money) and written (a decimal string) are one value to Postgres.
              paidAmount: eb.fn.coalesce(eb.cast<string | null>(eb.val(change.paidAmount?.toFixed() ?? null), "numeric"), eb.ref("paidAmount")).$castTo<string | null>(),
              evidence: eb.fn.coalesce(eb.val(change.evidence ?? null), eb.ref("evidence")),
              updatedAt: new Date(),
            }))
            .where("reference", "=", reference)
            .where("status", "=", sql.lit("created"))
            .returning("reference"),
        )
        .with("l", (qc) =>
          qc
            .insertInto("sandboxLegs")
            .columns(["id", "reference", "position", "amount", "legacy", "completedAt"])
            .expression(qc.selectFrom(["u", legRows]).select(["t.id", "u.reference", "t.position", "t.amount", "t.legacy", "t.completedAt"])),
        )
        .with("i", (qc) =>
          qc
            .insertInto("sandboxEvidenceItems")
            .columns(["id", "legId", "position", "amount", "completedAt"])
            .expression(qc.selectFrom(["u", itemRows]).select(["t.id", "t.legId", "t.position", "t.amount", "t.completedAt"])),
        )
        .selectFrom("u")
        .select("u.reference")
        .executeTakeFirst();
      return updated !== undefined;
    },

    /**
     * Whether this is the first evidence request of an operation paid under `late`: the first
     * request turns its mode to `complete` (a compare-and-set, so of two at once one is first).
     */
    async evidenceFirstAsked(reference: string): Promise<boolean> {
      const turned = await db
        .updateTable("sandboxOperations")
        .set({ evidence: "complete" satisfies EvidenceMode })
        .where("reference", "=", reference)
        .where("evidence", "=", "late" satisfies EvidenceMode)
        .returning("reference")
        .executeTakeFirst();
      return turned !== undefined;
    },

    /** References of `created` operations whose requisites lapsed by `now` (oldest first). */
    async dueForExpiry(now: Date, limit = 100): Promise<string[]> {
      const rows = await db
        .selectFrom("sandboxOperations")
        .select("reference")
        .where("status", "=", sql.lit("created"))
        .where("expiresAt", "<=", now)
        .orderBy("expiresAt")
        .limit(limit)
        .execute();
      return rows.map((r) => r.reference);
    },

    /**
     * The legs of an operation with their items, in order (one statement). Each leg's items are
     * read through the (leg_id, position) index by a LATERAL subquery (OFFSET 0 keeps the planner
     * from flattening it into a join): without table statistics (a Postgres without autovacuum) the
     * plain join was planned as a hash over a scan of every item, growing with the table.
     */
    async legs(reference: string): Promise<StoredLeg[]> {
      const rows = await db
        .selectFrom("sandboxLegs as l")
        .leftJoinLateral(
          (eb) => eb.selectFrom("sandboxEvidenceItems").select(["id", "amount", "completedAt", "position"]).whereRef("legId", "=", "l.id").offset(sql.lit(0)).as("i"),
          (join) => join.onTrue(),
        )
        .select(["l.id", "l.amount", "l.completedAt", "l.legacy", "i.id as itemId", "i.amount as itemAmount", "i.completedAt as itemCompletedAt"])
        .where("l.reference", "=", reference)
        .orderBy("l.position")
        .orderBy("i.position")
        .execute();
      const legs: StoredLeg[] = [];
      for (const r of rows) {
        let leg = legs[legs.length - 1];
        if (!leg || leg.id !== r.id) {
          leg = { id: r.id, amount: r.amount, completedAt: r.completedAt, legacy: r.legacy, items: [] };
          legs.push(leg);
        }
        // Every item's receipt can be rendered (legacy legs have no items).
        if (r.itemId !== null) leg.items.push({ id: r.itemId, amount: r.itemAmount!, completedAt: r.itemCompletedAt!, hasFile: true });
      }
      return legs;
    },

    /** What an evidence item's receipt states; null when there is no such item. */
    async receiptFacts(itemId: string): Promise<ReceiptFacts | null> {
      const row = await db
        .selectFrom("sandboxEvidenceItems as i")
        .innerJoin("sandboxLegs as l", "l.id", "i.legId")
        .innerJoin("sandboxOperations as o", "o.reference", "l.reference")
        .select(["i.id", "i.amount", "i.completedAt", "o.currency", "o.requisites"])
        .where("i.id", "=", itemId)
        .executeTakeFirst();
      if (!row) return null;
      const requisites = JSON.parse(row.requisites) as Requisites;
      return { amount: `${formatExact(row.amount)} ${row.currency}`, recipient: requisites.number, itemId: row.id, completedAt: row.completedAt };
    },
  };
}
