/**
 * Keeps the outbox and processed_events from growing without bound: both gain a row per event,
 * forever, and every scan and vacuum of them pays for that. No business rules.
 */
import { sql } from "kysely";
import { kitTables } from "../db/kit-tables";
import { STREAM_MAX_AGE_MS, type KitLog } from "./nats";
import type { PgDb } from "../db/pg-db";
import { runPeriodically } from "../runtime/periodic";

/**
 * How long both are kept. A processed_events row must outlive every redelivery of its event: the
 * stream keeps messages 7 days, and a durable recreated from the start replays them all. A
 * published outbox row must outlive reconciliation's look back (24 h: operations' outbox is the
 * record consumers replay) and JetStream's duplicate window (2 min). A day more than the stream.
 */
export const EVENT_RECORD_KEEP_MS = STREAM_MAX_AGE_MS + 24 * 60 * 60 * 1000;

export interface HousekeepingOptions {
  /** The unit's database (`deps.sql`). */
  db: PgDb<any>;
  log: KitLog;
  /** Pause between passes (default 1 h). */
  everyMs?: number;
  /** Rows older than this go (default {@link EVENT_RECORD_KEEP_MS}). */
  keepMs?: number;
  /** Rows deleted per statement, so no pass holds a long transaction (default 5,000). */
  batchSize?: number;
}

/** A kit table and its timestamp column that says when a row became deletable. */
type Aged = { table: "outbox"; column: "publishedAt" } | { table: "processedEvents"; column: "processedAt" };

/**
 * Deletes the rows of `table` whose `column` is before `cutoff` (a NULL never is), in batches,
 * oldest first, until fewer than `batchSize` rows matched; answers how many went. Each batch is
 * found through the column's index and deleted by row address (a TID scan), whatever the planner
 * guesses without statistics.
 */
async function deleteOlderThan(db: PgDb<any>, { table, column }: Aged, cutoff: Date, batchSize: number): Promise<number> {
  const [from, by] = [sql.table(table), sql.ref(column)]; // KitTables' names, which CamelCasePlugin writes as "processed_events", "published_at"
  const statement = sql`DELETE FROM ${from}
    WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${from} WHERE ${by} < ${cutoff.toISOString()}::timestamptz ORDER BY ${by} LIMIT ${batchSize}))`;
  let deleted = 0;
  for (;;) {
    const n = Number((await statement.execute(kitTables(db))).numAffectedRows ?? 0n);
    deleted += n;
    if (n < batchSize) return deleted;
  }
}

/**
 * Deletes published outbox rows and processed_events rows older than `keepMs`, every `everyMs`.
 * Unpublished outbox rows stay whatever their age. Replicas may run it at once: a row deleted by
 * one is simply not found by the other. Answers `pass` (one pass now) and `stop`.
 */
export function startHousekeeping(opts: HousekeepingOptions) {
  const keepMs = opts.keepMs ?? EVENT_RECORD_KEEP_MS;
  const batchSize = opts.batchSize ?? 5000;

  async function pass(): Promise<{ outbox: number; processedEvents: number }> {
    const cutoff = new Date(Date.now() - keepMs);
    const outbox = await deleteOlderThan(opts.db, { table: "outbox", column: "publishedAt" }, cutoff, batchSize); // unpublished: NULL
    const processedEvents = await deleteOlderThan(opts.db, { table: "processedEvents", column: "processedAt" }, cutoff, batchSize);
    if (outbox + processedEvents > 0) opts.log.info({ outbox, processedEvents, cutoff: cutoff.toISOString() }, "housekeeping: old event records deleted");
    return { outbox, processedEvents };
  }

  return runPeriodically(pass, opts.everyMs ?? 60 * 60 * 1000, (err) => opts.log.warn({ err }, "housekeeping pass failed"));
}
