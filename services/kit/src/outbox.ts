/**
 * Transactional outbox: producers write an event row in the same transaction as their state
 * change ({@link enqueueEvent}); {@link OutboxRelay} publishes committed rows to JetStream with
 * `Nats-Msg-Id` = event id and marks them published only after the PubAck.
 * The tables are in `services/kit/sql/outbox.sql`. No business rules.
 */
import { randomUUID } from "node:crypto";
import type { JetStreamClient, NatsConnection, PubAck } from "nats";
import { scopedSubject, type KitLog } from "./nats";
import { preferPlainIndexScan } from "./plain-index-scan";
import type { DbClient, SqlClient } from "./sql-client";

/** The NOTIFY channel that wakes the relays of a service's database when an outbox row commits. */
export const OUTBOX_CHANNEL = "pgw_outbox";

/**
 * Writes an event to the outbox inside the caller's transaction (`tx`), so it is published if and
 * only if that transaction commits. Resolves to the event id (a new uuid v4 unless `eventId` is
 * given), which consumers see as the `Nats-Msg-Id` header.
 *
 * A kit pg transaction whose client this process listens to wakes the process's own relay at
 * commit. Elsewhere (Prisma's transactions, on cold paths) the row notifies {@link OUTBOX_CHANNEL},
 * delivered on commit, so every relay listening starts at once.
 */
export async function enqueueEvent(
  tx: SqlClient,
  subject: string,
  payload: Uint8Array,
  eventId: string = randomUUID(),
): Promise<string> {
  const insert = `INSERT INTO "outbox" ("id", "subject", "payload", "created_at") VALUES ($1::uuid, $2, $3, clock_timestamp())`;
  const local = tx.wakeOnCommit?.(OUTBOX_CHANNEL) ?? false;
  const statement = local ? insert : `WITH ins AS (${insert} RETURNING 1) SELECT pg_notify('${OUTBOX_CHANNEL}', '') FROM ins`;
  await tx.$executeRawUnsafe(statement, eventId, subject, Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength));
  return eventId;
}

/** Options of {@link OutboxRelay}. */
export interface OutboxRelayOptions {
  /** The service's database client (a PrismaClient). */
  db: DbClient;
  nc: NatsConnection;
  log: KitLog;
  /** Rows taken per transaction (default 100). */
  batchSize?: number;
  /**
   * Poll interval when idle, in ms (default 1000): a safety net, since {@link OutboxRelay.nudge}
   * (called after the unit's own commits and on every NOTIFY of {@link OUTBOX_CHANNEL}) wakes the
   * relay as rows commit.
   */
  idleMs?: number;
  /** How long to wait for each PubAck, in ms (default 2000). */
  publishTimeoutMs?: number;
  /**
   * After a pass that published something (the relay is busy), wait this long before the next one
   * so the events committed meanwhile share one batch, in ms (default 0); the next pass runs only
   * if something was nudged meanwhile. An idle relay still publishes at once when nudged, so this
   * only adds latency under load, where it saves a transaction per event.
   */
  gatherMs?: number;
  /** First and largest delay between attempts while NATS or the database fails (default 100 / 2000 ms). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

interface OutboxRow {
  id: string;
  subject: string;
  payload: Uint8Array;
}

/**
 * Publishes committed outbox rows to JetStream.
 *
 * Each pass takes up to `batchSize` unpublished rows in `created_at` order (best effort: the
 * column has millisecond precision; ties go by physical row position, which follows insertion
 * order in practice) with
 * `FOR UPDATE SKIP LOCKED` (replicas share the work without publishing a row twice), publishes
 * them with `msgID` = row id, and in the same transaction marks published exactly the rows whose
 * PubAck arrived. While NATS or the database is unavailable it retries with a capped exponential
 * backoff; a row is never marked without a PubAck, and a re-publish after a lost PubAck is
 * dropped by JetStream's duplicate window.
 */
export class OutboxRelay {
  private readonly db: DbClient;
  private readonly nc: NatsConnection;
  private readonly log: KitLog;
  private readonly batchSize: number;
  private readonly idleMs: number;
  private readonly publishTimeoutMs: number;
  private readonly gatherMs: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private js: JetStreamClient | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private nudged = false;
  private wake: (() => void) | undefined;

  constructor(opts: OutboxRelayOptions) {
    this.db = opts.db;
    this.nc = opts.nc;
    this.log = opts.log;
    this.batchSize = opts.batchSize ?? 100;
    this.idleMs = opts.idleMs ?? 1000;
    this.publishTimeoutMs = opts.publishTimeoutMs ?? 2000;
    this.gatherMs = opts.gatherMs ?? 0;
    this.minBackoffMs = opts.minBackoffMs ?? 100;
    this.maxBackoffMs = opts.maxBackoffMs ?? 2000;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) {
      throw new Error(`OutboxRelay batchSize must be a positive integer, got ${opts.batchSize}`);
    }
  }

  /** Starts the background loop (no-op when already running). */
  start(): void {
    if (this.loop) return;
    this.stopped = false;
    this.loop = this.run();
  }

  /** Asks for a pass now, e.g. right after a transaction that enqueued events committed. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /** Stops the loop; resolves once the batch in flight (if any) has committed or rolled back. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    const loop = this.loop;
    this.loop = undefined;
    await loop;
  }

  /**
   * Runs one pass: publishes up to `batchSize` rows and resolves to how many were marked
   * published. Throws when NATS or the database fails (rows that got a PubAck are still marked).
   */
  async publishBatch(): Promise<number> {
    const js = (this.js ??= this.nc.jetstream({ timeout: this.publishTimeoutMs }));
    let failure: unknown;
    const published = await this.db.$transaction(
      async (tx) => {
        await preferPlainIndexScan(tx); // published rows leave the partial index's predicate
        const rows = await tx.$queryRawUnsafe<OutboxRow[]>(
          `SELECT "id"::text AS "id", "subject", "payload" FROM "outbox"
            WHERE "published_at" IS NULL
            ORDER BY "created_at", ctid
            LIMIT ${this.batchSize}
            FOR UPDATE SKIP LOCKED`,
        );
        if (rows.length === 0) return 0;
        const results = await Promise.allSettled(
          rows.map((r) => js.publish(scopedSubject(this.nc, r.subject), toBytes(r.payload), { msgID: r.id, timeout: this.publishTimeoutMs })),
        );
        const acked: string[] = [];
        results.forEach((res, i) => {
          if (res.status === "fulfilled") acked.push(rows[i].id);
          else failure ??= res.reason;
        });
        if (acked.length > 0) {
          await tx.$executeRawUnsafe(
            `UPDATE "outbox" SET "published_at" = clock_timestamp() WHERE "id" = ANY(string_to_array($1, ',')::uuid[])`,
            acked.join(","),
          );
        }
        this.log.debug(
          { published: acked.length, failed: rows.length - acked.length, duplicates: countDuplicates(results) },
          "outbox batch",
        );
        return acked.length;
      },
      { maxWait: 5000, timeout: this.publishTimeoutMs + 10_000 },
    );
    if (failure !== undefined) throw failure;
    return published;
  }

  private async run(): Promise<void> {
    let backoff = 0;
    while (!this.stopped) {
      this.nudged = false;
      let published = 0;
      try {
        published = await this.publishBatch();
        backoff = 0;
      } catch (err) {
        backoff = Math.min(this.maxBackoffMs, Math.max(this.minBackoffMs, backoff * 2));
        this.log.warn({ err, retryInMs: backoff }, "outbox relay: publish failed, retrying");
      }
      if (this.stopped) break;
      if (backoff > 0) await this.sleep(backoff, false);
      else if (published >= this.batchSize) continue;
      else {
        // Busy: what commits during the gather window shares the next pass. A pass runs again only
        // when something was nudged meanwhile; otherwise it would find nothing (the table held less
        // than a batch), so the relay idles until the next nudge or poll.
        if (published > 0 && this.gatherMs > 0) await this.sleep(this.gatherMs, false);
        if (!this.nudged && !this.stopped) await this.sleep(this.idleMs, true);
      }
    }
  }

  /** Waits `ms`; `stop()` always ends the wait early, `nudge()` only when `nudgeable`. */
  private sleep(ms: number, nudgeable: boolean): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = () => {
        if (nudgeable || this.stopped) done();
      };
    });
  }
}

function toBytes(payload: Uint8Array): Uint8Array {
  return payload instanceof Uint8Array ? payload : Uint8Array.from(payload as ArrayLike<number>);
}

function countDuplicates(results: PromiseSettledResult<PubAck>[]): number {
  return results.filter((r) => r.status === "fulfilled" && r.value.duplicate).length;
}
