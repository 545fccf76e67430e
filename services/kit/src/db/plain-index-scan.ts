import { sql } from "kysely";
import type { PgTx } from "./pg-db";

/**
 * Makes the rest of transaction `tx` read indexes with plain index scans, never bitmap scans.
 *
 * For scans of rows that leave an index's reach as they are processed (an outbox's unpublished
 * rows, operations still `creating`): the index keeps an entry for each row's old version until a
 * vacuum, and only a plain index scan marks such an entry dead as it passes it, so the next scan
 * skips it. A bitmap scan, which the planner picks for small tables without statistics (autovacuum
 * off), re-reads every stale entry and its heap page on every scan: 4–6 ms a pass of routing's
 * outbox relay after 3,200 events, 35 ms a sweep of operations after 35,000 creates.
 */
export async function preferPlainIndexScan(tx: PgTx<any>): Promise<void> {
  await sql`SET LOCAL enable_bitmapscan = off`.execute(tx);
}
