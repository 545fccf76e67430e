/**
 * The re-seal pass behind a data key rotation (DATA_RESEAL=only): every sealed value not under the
 * active key is sealed again under it, and values an earlier version stored in clear are sealed.
 */
import { sql } from "kysely";
import type { DataKeys } from "./data-keys";
import type { PgDb } from "./pg-db";

/**
 * A text column of sealed values, in a table whose key is `id` (uuid). Names are ours, never input:
 * snake_case as in SQL, which CamelCasePlugin leaves as they are (camelCase ones, as in a unit's
 * Kysely types, it would write in snake_case).
 */
export interface SealedColumn {
  table: string;
  column: string;
}

const FIRST_ID = "00000000-0000-0000-0000-000000000000";

/**
 * Re-seals one column in batches of `batch` rows, in id order. A row written meanwhile is left to
 * its writer (compare and set on the value read), which sealed it under the active key already.
 * Resolves to the number of values re-sealed; throws SealedValueError for a value no held key opens.
 */
async function resealColumn(db: PgDb<any>, keys: DataKeys, { table, column }: SealedColumn, batch: number): Promise<number> {
  // The unit's table and column by name (whichever unit this is): SQL with quoted identifiers.
  const [t, c] = [sql.table(table), sql.ref(column)];
  let after = FIRST_ID;
  let resealed = 0;
  for (;;) {
    const { rows } = await sql<{ id: string; stored: string }>`SELECT id::text AS id, ${c} AS stored FROM ${t}
        WHERE ${c} IS NOT NULL AND NOT starts_with(${c}, ${keys.activePrefix}) AND id > ${after}::uuid ORDER BY id LIMIT ${batch}`.execute(db);
    if (rows.length === 0) return resealed;
    const sealed = rows.map((r) => keys.seal(keys.read(r.stored)));
    const { numAffectedRows } = await sql`UPDATE ${t} t SET ${c} = v.sealed FROM unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.stored)}::text[], ${sealed}::text[]) AS v(id, stored, sealed)
        WHERE t.id = v.id AND t.${c} = v.stored`.execute(db);
    resealed += Number(numAffectedRows ?? 0n);
    after = rows[rows.length - 1].id;
  }
}

/** Re-seals every column of `columns` in the unit's database; resolves to the count per `table.column`. */
export async function resealColumns(db: PgDb<any>, keys: DataKeys, columns: readonly SealedColumn[], batch = 500): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const c of columns) counts[`${c.table}.${c.column}`] = await resealColumn(db, keys, c, batch);
  return counts;
}
