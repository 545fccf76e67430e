import type { EvidenceItemDraft, MaterialisedStatus } from "@pgw/contracts";
import { sql, type Selectable } from "kysely";
import type { EvidenceItem } from "../generated/kysely/database";
import type { Queries } from "./index";

/** A stored evidence item, as every read here selects it. */
export type EvidenceItemRow = Pick<Selectable<EvidenceItem>, "id" | "operationId" | "amount" | "completedAt" | "legacy" | "hasFile" | "fileId" | "providerItemId">;

/** An operation's materialised evidence. */
export interface StoredEvidence {
  status: MaterialisedStatus;
  items: EvidenceItemRow[];
}

/** An operation's materialised evidence; null when it was never materialised. */
// Every get_operation_state of a completed operation reads this: one statement, the state and its
// items together.
export async function readEvidence(db: Queries, operationId: string): Promise<StoredEvidence | null> {
  const rows = await db
    .selectFrom("evidenceStates as s")
    .leftJoin("evidenceItems as i", "i.operationId", "s.operationId")
    .select(["s.status", "i.id", "i.operationId", "i.amount", "i.completedAt", "i.legacy", "i.hasFile", "i.fileId", "i.providerItemId"])
    .where("s.operationId", "=", operationId)
    .orderBy("i.completedAt")
    .orderBy("i.id")
    .execute();
  if (rows.length === 0) return null;
  // A state without items is one row whose item columns are all null (the join found none).
  const items = rows.flatMap(({ status: _, ...item }) => (item.id === null ? [] : [item as EvidenceItemRow]));
  return { status: rows[0].status as MaterialisedStatus, items };
}

/**
 * Stores materialised evidence once: the state row is the operation's primary key and the items
 * are written only with it, so a concurrent or repeated materialisation (event and on-demand
 * read), even from legs that changed since, changes nothing the first one wrote. One statement
 * (items and state together, atomically). Answers the evidence as stored when this call stored it,
 * so the caller needs no read back; null when an earlier materialisation had (then read what it
 * stored).
 */
export async function saveEvidence(db: Queries, operationId: string, status: MaterialisedStatus, items: EvidenceItemDraft[]): Promise<StoredEvidence | null> {
  // The items as one array parameter per column, unnested in their order (n).
  const columns = {
    id: items.map((i) => i.id),
    legId: items.map((i) => i.legId),
    amount: items.map((i) => i.amount.toFixed()),
    completedAt: items.map((i) => i.completedAt.toISOString()),
    legacy: items.map((i) => i.legacy),
    hasFile: items.map((i) => i.hasFile),
    providerItemId: items.map((i) => i.providerItemId),
  };
  const t = sql<{ id: string; legId: string; amount: string; completedAt: Date; legacy: boolean; hasFile: boolean; providerItemId: string | null; n: bigint }>`unnest(${columns.id}::uuid[], ${columns.legId}::text[], ${columns.amount}::numeric[], ${columns.completedAt}::timestamptz[], ${columns.legacy}::boolean[], ${columns.hasFile}::boolean[], ${columns.providerItemId}::text[]) WITH ORDINALITY`.as<"t">(
    sql`t(id, leg_id, amount, completed_at, legacy, has_file, provider_item_id, n)`,
  );
  // The state row decides: items are written only by the statement that wrote it, so a later
  // materialisation from other legs (the provider's answer changed) adds no items of its own.
  const stored = await db
    .with("s", (qc) =>
      qc
        .insertInto("evidenceStates")
        .values({ operationId, status })
        .onConflict((oc) => oc.doNothing())
        .returning(sql<number>`1`.as("stored")),
    )
    .with("i", (qc) =>
      qc
        .insertInto("evidenceItems")
        .columns(["id", "operationId", "legId", "amount", "completedAt", "legacy", "hasFile", "providerItemId"])
        .expression(
          qc
            .selectFrom(t)
            .select((eb) => ["t.id", eb.cast<string>(eb.val(operationId), "uuid").as("operationId"), "t.legId", "t.amount", "t.completedAt", "t.legacy", "t.hasFile", "t.providerItemId"])
            .where((eb) => eb.exists(eb.selectFrom("s").select("s.stored")))
            .orderBy("t.n"),
        )
        .onConflict((oc) => oc.doNothing()),
    )
    .selectFrom("s")
    .select("s.stored")
    .executeTakeFirst();
  if (!stored) return null;
  const rows = items.map((i): EvidenceItemRow => ({ id: i.id, operationId, amount: i.amount, completedAt: i.completedAt, legacy: i.legacy, hasFile: i.hasFile, fileId: null, providerItemId: i.providerItemId }));
  // readEvidence's order (completed_at, id); ids are lowercase hex, so text order is uuid order.
  rows.sort((a, b) => a.completedAt.getTime() - b.completedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { status, items: rows };
}

/** One evidence item by its public id. */
export async function findEvidenceItem(db: Queries, id: string): Promise<EvidenceItemRow | null> {
  const row = await db
    .selectFrom("evidenceItems")
    .select(["id", "operationId", "amount", "completedAt", "legacy", "hasFile", "fileId", "providerItemId"])
    .where("id", "=", id)
    .executeTakeFirst();
  return row ?? null;
}

/** Remembers where an item's provider file was cached. */
export async function setItemFile(db: Queries, id: string, fileId: string): Promise<void> {
  await db.updateTable("evidenceItems").set({ fileId }).where("id", "=", id).where("fileId", "is", null).execute();
}
