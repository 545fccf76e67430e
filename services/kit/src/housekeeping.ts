/**
 * Keeps the outbox and processed_events from growing without bound: both gain a row per event,
 * forever, and every scan and vacuum of them pays for that. No business rules.
 */
import { STREAM_MAX_AGE_MS, type KitLog } from "./nats";
import { runPeriodically } from "./periodic";
import type { DbClient } from "./sql-client";

/**
 * How long both are kept. A processed_events row must outlive every redelivery of its event: the
 * stream keeps messages 7 days, and a durable recreated from the start replays them all. A
 * published outbox row must outlive reconciliation's look back (24 h: operations' outbox is the
 * record consumers replay) and JetStream's duplicate window (2 min). A day more than the stream.
 */
export const EVENT_RECORD_KEEP_MS = STREAM_MAX_AGE_MS + 24 * 60 * 60 * 1000;

export interface HousekeepingOptions {
  db: DbClient;
  log: KitLog;
  /** Pause between passes (default 1 h). */
  everyMs?: number;
  /** Rows older than this go (default {@link EVENT_RECORD_KEEP_MS}). */
  keepMs?: number;
  /** Rows deleted per statement, so no pass holds a long transaction (default 5,000). */
  batchSize?: number;
}

/**
 * Deletes the rows of `table` whose `column` is before `cutoff` (a NULL never is), in batches,
 * oldest first, until fewer than `batchSize` rows matched; answers how many went. Each batch is
 * found through the column's index and deleted by row address (a TID scan), whatever the planner
 * guesses without statistics.
 */
async function deleteOlderThan(db: DbClient, table: string, column: string, cutoff: Date, batchSize: number): Promise<number> {
  const statement = `DELETE FROM "${table}"
    WHERE ctid = ANY(ARRAY(SELECT ctid FROM "${table}" WHERE "${column}" < $1::timestamptz ORDER BY "${column}" LIMIT $2))`;
  let deleted = 0;
  for (;;) {
    const n = Number(await db.$executeRawUnsafe(statement, cutoff.toISOString(), batchSize));
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
    const outbox = await deleteOlderThan(opts.db, "outbox", "published_at", cutoff, batchSize); // unpublished: NULL
    const processedEvents = await deleteOlderThan(opts.db, "processed_events", "processed_at", cutoff, batchSize);
    if (outbox + processedEvents > 0) opts.log.info({ outbox, processedEvents, cutoff: cutoff.toISOString() }, "housekeeping: old event records deleted");
    return { outbox, processedEvents };
  }

  return runPeriodically(pass, opts.everyMs ?? 60 * 60 * 1000, (err) => opts.log.warn({ err }, "housekeeping pass failed"));
}
