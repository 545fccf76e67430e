/**
 * Transactional outbox: producers write an event row in the same transaction as their state
 * change ({@link enqueueEvent}); {@link OutboxRelay} publishes committed rows to JetStream with
 * `Nats-Msg-Id` = event id and marks them published only after the PubAck.
 * The tables are in `services/kit/sql/outbox.sql`. No business rules.
 */
import { sql, type DeleteQueryBuilder, type Expression, type InsertQueryBuilder, type Kysely, type UpdateQueryBuilder } from "kysely";
import { randomUUID } from "node:crypto";
import type { JetStreamClient, NatsConnection, PubAck } from "nats";
import { kitTables, type KitTables } from "../db/kit-tables";
import { eventMetricsOf } from "./event-metrics";
import { scopedSubject, type KitLog } from "./nats";
import type { CommitHooks, PgDb, PgTx } from "../db/pg-db";
import { preferPlainIndexScan } from "../db/plain-index-scan";
import { currentTraceparent } from "../runtime/tracing";
import { eventHeaders } from "./trace-context";

/** The NOTIFY channel that wakes the relays of a service's database when an outbox row commits. */
export const OUTBOX_CHANNEL = "pgw_outbox";

/** The payload as the BYTEA parameter pg takes (a Buffer over the same bytes). */
const asBuffer = (payload: Uint8Array) => Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);

/**
 * Writes an event to the outbox inside the caller's kit transaction (`tx`, from `PgDb.$transaction`),
 * so it is published if and only if that transaction commits. Resolves to the event id (a new uuid
 * v4 unless `eventId` is given), which consumers see as the `Nats-Msg-Id` header. The row keeps the
 * current span's `traceparent` (trace-context.ts), so its consumers continue this trace.
 *
 * When this process listens to its database's commits (`PgDb.onCommit`, as every unit's relay
 * does), the event is handed to the process's own relay at commit ({@link OutboxRelay.handOver}).
 * Otherwise the row notifies {@link OUTBOX_CHANNEL}, delivered on commit, so every relay listening
 * starts at once.
 */
export async function enqueueEvent(
  tx: PgTx<any>,
  subject: string,
  payload: Uint8Array,
  eventId: string = randomUUID(),
): Promise<string> {
  const event: OutboxEvent = { id: eventId, subject, payload, traceparent: currentTraceparent() };
  const db = kitTables(tx);
  const insert = db.insertInto("outbox").values({ id: eventId, subject, payload: asBuffer(payload), traceparent: event.traceparent, createdAt: sql<Date>`clock_timestamp()` });
  if (tx.wakeOnCommit(OUTBOX_CHANNEL, event)) await insert.execute();
  else {
    await db
      .with("ins", () => insert.returning(sql<number>`1`.as("one")))
      .selectFrom("ins")
      .select(sql`pg_notify(${sql.lit(OUTBOX_CHANNEL)}, '')`.as("notified"))
      .execute();
  }
  return eventId;
}

/**
 * One data-modifying statement built with Kysely that returns rows (`insertInto … returning`,
 * `updateTable … returning`, `deleteFrom … returning`), of any unit's database: `O` is its row.
 */
export type ReturningChange<O> = InsertQueryBuilder<any, any, O> | UpdateQueryBuilder<any, any, any, O> | DeleteQueryBuilder<any, any, O>;

/**
 * Runs `change` and, if it returned a row, writes `event` to the outbox in the same statement
 * (`WITH changed AS (<change>), event AS (INSERT INTO outbox … WHERE EXISTS (SELECT 1 FROM changed))
 * SELECT * FROM changed`): atomic like a transaction holding both, without its BEGIN and COMMIT
 * round trips. Resolves to the rows `change` returned, typed as its `returning` says. The row keeps
 * the current span's `traceparent` unless `event` names one. `db` is the
 * unit's database or one of its kit transactions (Kysely on the pool, or `$transaction`'s `tx`).
 * The event is handed to this process's relay once the statement returns (outside a transaction)
 * or once the transaction commits (inside one), as {@link enqueueEvent} hands over its events;
 * where no relay listens, a NOTIFY on {@link OUTBOX_CHANNEL} follows (delivered at commit).
 */
export async function changeWithEvent<O>(db: Kysely<any> & Partial<Pick<PgDb, "announceCommitted"> & CommitHooks>, change: ReturningChange<O>, untraced: OutboxEvent): Promise<O[]> {
  const event = { ...untraced, traceparent: untraced.traceparent ?? currentTraceparent() };
  // Every unit has the kit's outbox table, whatever else its database holds.
  const outboxDb = kitTables(db);
  const rows = await outboxDb
    .with("changed", () => change as unknown as Expression<Record<string, unknown>>)
    .with("event", (qc) =>
      qc
        .insertInto("outbox")
        .columns(["id", "subject", "payload", "traceparent", "createdAt"])
        .expression(
          qc
            .selectNoFrom([
              sql<string>`${event.id}::uuid`.as("id"),
              sql<string>`${event.subject}::text`.as("subject"),
              sql<Buffer>`${asBuffer(event.payload)}::bytea`.as("payload"),
              sql<string | null>`${event.traceparent ?? null}::text`.as("traceparent"),
              sql<Date>`clock_timestamp()`.as("createdAt"),
            ])
            .where((eb) => eb.exists(eb.selectFrom("changed").select(sql.lit(1).as("one")))),
        ),
    )
    .selectFrom("changed")
    .selectAll()
    .execute();
  if (rows.length === 0) return [];
  const handedOver = db.wakeOnCommit ? db.wakeOnCommit(OUTBOX_CHANNEL, event) : db.announceCommitted?.(OUTBOX_CHANNEL, [event]);
  if (!handedOver) await sql`SELECT pg_notify(${sql.lit(OUTBOX_CHANNEL)}, '')`.execute(outboxDb);
  return rows as O[];
}

/**
 * How long a periodic pass leaves a row to the process that committed it, in ms: that process hands
 * it over and publishes it from memory, and a replica's pass reading it before it is marked would
 * publish it again. A nudged pass (a NOTIFY, a failed publish) takes every row.
 */
const HAND_OVER_GRACE_MS = 2000;

/** Options of {@link OutboxRelay}. */
export interface OutboxRelayOptions {
  /** The unit's database (`deps.sql`). */
  db: PgDb<any>;
  nc: NatsConnection;
  log: KitLog;
  /** Rows taken per transaction (default 100). */
  batchSize?: number;
  /**
   * How often the relay reads the table, in ms (default 1000): a safety net, since the unit's own
   * commits hand their events over ({@link OutboxRelay.handOver}) and every NOTIFY of
   * {@link OUTBOX_CHANNEL} calls {@link OutboxRelay.nudge}.
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
  /**
   * Handed-over events acknowledged meanwhile are marked published together this often, in ms
   * (default 100): one statement instead of one per pass. Those a crash leaves unmarked go out again
   * at the next start, and JetStream's duplicate window (2 minutes) drops them.
   */
  markEveryMs?: number;
  /** First and largest delay between attempts while NATS or the database fails (default 100 / 2000 ms). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/** An outbox row as the relay publishes it. */
export interface OutboxEvent {
  id: string;
  subject: string;
  payload: Uint8Array;
  /** The trace context the event was written in, sent as the message's `traceparent` header. */
  traceparent?: string | null;
}

/** Marks the events `ids` published: one statement and one parameter (the ids joined by commas), whatever their number. */
const markPublished = (db: Kysely<KitTables>, ids: string[]) =>
  db
    .updateTable("outbox")
    .set({ publishedAt: sql<Date>`clock_timestamp()` })
    .where("id", "=", sql<string>`ANY(string_to_array(${ids.join(",")}, ',')::uuid[])`)
    .execute();

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
 *
 * Events this process committed itself are handed over at commit and published from memory, in
 * commit order, and marked every `markEveryMs` in one statement: no transaction and no read of the
 * table (the five-statement pass cost a create about a sixth of its SQL). What fails there stays
 * unmarked and goes out with the next pass over the table, which also runs every `idleMs` while busy.
 */
export class OutboxRelay {
  private readonly db: PgDb<any>;
  private readonly nc: NatsConnection;
  private readonly log: KitLog;
  private readonly batchSize: number;
  private readonly idleMs: number;
  private readonly publishTimeoutMs: number;
  private readonly gatherMs: number;
  private readonly markEveryMs: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private js: JetStreamClient | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private nudged = false;
  private handed: OutboxEvent[] = [];
  private lastPassAcked = new Set<string>();
  private lastPassAt = -Infinity;
  /** Handed-over events acknowledged but not yet marked published. */
  private unmarked: string[] = [];
  private markTimer: NodeJS.Timeout | undefined;
  private marking: Promise<void> = Promise.resolve();
  private wake: (() => void) | undefined;

  constructor(opts: OutboxRelayOptions) {
    this.db = opts.db;
    this.nc = opts.nc;
    this.log = opts.log;
    this.batchSize = opts.batchSize ?? 100;
    this.idleMs = opts.idleMs ?? 1000;
    this.publishTimeoutMs = opts.publishTimeoutMs ?? 2000;
    this.gatherMs = opts.gatherMs ?? 0;
    this.markEveryMs = opts.markEveryMs ?? 100;
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

  /** Asks for a pass over the table now, e.g. when another process's outbox row committed. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /** Takes events whose transaction just committed in this process, to publish without reading them back. */
  handOver(events: OutboxEvent[]): void {
    this.handed.push(...events);
    this.wake?.();
  }

  /** Stops the loop; resolves once the batch in flight (if any) has committed or rolled back, and what was acknowledged is marked. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    const loop = this.loop;
    this.loop = undefined;
    await loop;
    await this.markAcknowledged();
  }

  /**
   * Runs one pass: publishes up to `batchSize` rows written at least `minAgeMs` ago and resolves to
   * how many were marked published. Throws when NATS or the database fails (rows that got a PubAck
   * are still marked).
   */
  async publishBatch(minAgeMs = 0): Promise<number> {
    await this.markAcknowledged(); // else the pass would read them as unpublished
    let failure: unknown;
    const published = await this.db.$transaction(
      async (tx) => {
        await preferPlainIndexScan(tx); // published rows leave the partial index's predicate
        const rows: OutboxEvent[] = await kitTables(tx)
          .selectFrom("outbox")
          .select(["id", "subject", "payload", "traceparent"])
          .where("publishedAt", "is", null)
          .$if(minAgeMs > 0, (q) => q.where("createdAt", "<", sql<Date>`clock_timestamp() - make_interval(secs => ${minAgeMs / 1000})`))
          .orderBy("createdAt")
          .orderBy(sql`ctid`)
          .limit(sql.lit(this.batchSize)) // a literal, as measured: as a parameter it would make the statement a prepared one, open to a generic plan
          .forUpdate()
          .skipLocked()
          .execute();
        if (rows.length === 0) return 0;
        const outcome = await this.publish(rows);
        failure = outcome.failure;
        if (outcome.acked.length > 0) await markPublished(kitTables(tx), outcome.acked);
        this.lastPassAcked = new Set(outcome.acked);
        return outcome.acked.length;
      },
      { maxWait: 5000, timeout: this.publishTimeoutMs + 10_000 },
    );
    if (failure !== undefined) throw failure;
    return published;
  }

  /** Publishes the events handed over so far, leaving those acknowledged to be marked ({@link markAcknowledged}); throws if any failed. */
  private async publishHandedOver(): Promise<number> {
    // An event can reach the table pass that just ran before its own process hands it over.
    const events = this.handed.splice(0).filter((e) => !this.lastPassAcked.has(e.id));
    const { acked, failure } = await this.publish(events);
    if (acked.length > 0) {
      this.unmarked.push(...acked);
      this.markTimer ??= setTimeout(() => void this.markAcknowledged(), this.markEveryMs);
    }
    if (failure !== undefined) throw failure;
    return acked.length;
  }

  /** Marks the acknowledged handed-over events published, in one statement; what it could not mark waits for the next time. */
  private markAcknowledged(): Promise<void> {
    clearTimeout(this.markTimer);
    this.markTimer = undefined;
    this.marking = this.marking.then(async () => {
      const ids = this.unmarked.splice(0);
      if (ids.length === 0) return;
      try {
        await markPublished(kitTables(this.db), ids);
      } catch (err) {
        this.unmarked.unshift(...ids);
        this.log.warn({ err, unmarked: ids.length }, "outbox relay: marking published failed, retrying");
        if (!this.stopped) this.markTimer ??= setTimeout(() => void this.markAcknowledged(), this.markEveryMs);
      }
    });
    return this.marking;
  }

  /** Publishes `events` in order, each with `msgID` = its id; answers the ids that got a PubAck. */
  private async publish(events: OutboxEvent[]): Promise<{ acked: string[]; failure: unknown }> {
    const js = (this.js ??= this.nc.jetstream({ timeout: this.publishTimeoutMs }));
    const results = await Promise.allSettled(
      events.map((e) =>
        js.publish(scopedSubject(this.nc, e.subject), toBytes(e.payload), { msgID: e.id, timeout: this.publishTimeoutMs, headers: eventHeaders(e.traceparent) }),
      ),
    );
    const acked: string[] = [];
    let failure: unknown;
    results.forEach((res, i) => {
      if (res.status === "fulfilled") acked.push(events[i].id);
      else failure ??= res.reason;
    });
    const failed = events.length - acked.length;
    const metrics = eventMetricsOf(this.nc);
    if (acked.length > 0) metrics?.published.inc(acked.length);
    if (failed > 0) metrics?.publishFailures.inc(failed);
    this.log.debug({ published: acked.length, failed, duplicates: countDuplicates(results) }, "outbox batch");
    return { acked, failure };
  }

  private async run(): Promise<void> {
    let backoff = 0;
    while (!this.stopped) {
      // The table is read when asked to, when nothing was handed over, and at least every idleMs.
      const overTable = this.nudged || this.handed.length === 0 || performance.now() - this.lastPassAt >= this.idleMs;
      let published = 0;
      let asked = false;
      try {
        if (overTable) {
          asked = this.nudged;
          this.nudged = false;
          this.lastPassAt = performance.now();
          published = await this.publishBatch(asked ? 0 : HAND_OVER_GRACE_MS);
        } else published = await this.publishHandedOver();
        backoff = 0;
      } catch (err) {
        this.nudged = true; // what failed is still unmarked in the table: the next pass reads it there
        backoff = Math.min(this.maxBackoffMs, Math.max(this.minBackoffMs, backoff * 2));
        this.log.warn({ err, retryInMs: backoff }, "outbox relay: publish failed, retrying");
      }
      if (this.stopped) break;
      if (backoff > 0) await this.sleep(backoff, false);
      else if (overTable && published >= this.batchSize) {
        this.nudged ||= asked; // what it was asked for may fill more than one batch
        continue;
      }
      else {
        // Busy: what commits during the gather window shares the next pass. A pass runs again only
        // when something was nudged or handed over meanwhile; otherwise it would find nothing (the
        // table held less than a batch), so the relay idles until then or the next poll.
        if (published > 0 && this.gatherMs > 0) await this.sleep(this.gatherMs, false);
        if (!this.nudged && this.handed.length === 0 && !this.stopped) await this.sleep(this.idleMs, true);
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
