/**
 * The re-seal pass behind a data key rotation (DATA_RESEAL=only): every sealed value not under the
 * active key is sealed again under it, and values an earlier version stored in clear are sealed.
 */
import type { DataKeys } from "./data-keys";
import type { SqlClient } from "./sql-client";

/** A text column of sealed values, in a table whose key is `id` (uuid). Names are ours, never input. */
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
async function resealColumn(db: SqlClient, keys: DataKeys, { table, column }: SealedColumn, batch: number): Promise<number> {
  let after = FIRST_ID;
  let resealed = 0;
  for (;;) {
    const rows = await db.$queryRawUnsafe<{ id: string; stored: string }[]>(
      `SELECT id::text AS id, "${column}" AS stored FROM "${table}"
        WHERE "${column}" IS NOT NULL AND NOT starts_with("${column}", $1) AND id > $2::uuid ORDER BY id LIMIT $3`,
      keys.activePrefix,
      after,
      batch,
    );
    if (rows.length === 0) return resealed;
    const sealed = rows.map((r) => keys.seal(keys.read(r.stored)));
    resealed += await db.$executeRawUnsafe(
      `UPDATE "${table}" t SET "${column}" = v.sealed FROM unnest($1::uuid[], $2::text[], $3::text[]) AS v(id, stored, sealed)
        WHERE t.id = v.id AND t."${column}" = v.stored`,
      rows.map((r) => r.id),
      rows.map((r) => r.stored),
      sealed,
    );
    after = rows[rows.length - 1].id;
  }
}

/** Re-seals every column of `columns`; resolves to the count per `table.column`. */
export async function resealColumns(db: SqlClient, keys: DataKeys, columns: readonly SealedColumn[], batch = 500): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const c of columns) counts[`${c.table}.${c.column}`] = await resealColumn(db, keys, c, batch);
  return counts;
}
