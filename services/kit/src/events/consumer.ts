import { isUuid } from "@pgw/contracts";
/**
 * Durable JetStream pull consumers that process each event exactly once per consumer name:
 * the event id (`Nats-Msg-Id`) is recorded in `processed_events` in the same transaction as the
 * handler's own writes, and the message is acknowledged only after that transaction commits.
 * No business rules.
 */
import {
  AckPolicy,
  DeliverPolicy,
  nanos,
  type ConsumerConfig,
  type ConsumerInfo,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from "nats";
import { eventMetricsOf } from "./event-metrics";
import { jsErrorCode, scopedDurable, scopedSubject, STREAM_NAME, type KitLog } from "./nats";
import { OrderedLanes } from "./ordered-lanes";
import { handlingInTrace } from "./trace-context";
import { kitTables } from "../db/kit-tables";
import type { PgDb, PgTx } from "../db/pg-db";

/** What a handler learns about the message besides its decoded payload. */
export interface EventMeta {
  /** The `Nats-Msg-Id` header: the producer's outbox event id. */
  eventId: string;
  subject: string;
  /** True when JetStream delivered this message before (a retry or a crash recovery). */
  redelivered: boolean;
  /** When the stream stored the message (a replayed event: when it occurred). */
  storedAt: Date;
}

/**
 * Thrown by a handler whose event must wait for another one still on its way (an earlier update of
 * the same thing): its transaction rolls back, and the message comes back after `retryInMs` without
 * counting as a failure (outcome `deferred`, logged at debug).
 */
export class EventDeferred extends Error {
  constructor(
    message: string,
    readonly retryInMs: number,
  ) {
    super(message);
    this.name = "EventDeferred";
  }
}

/** Options of {@link startConsumer}. */
export interface ConsumerOptions<T, P = undefined> {
  nc: NatsConnection;
  /** Durable consumer name; also the `processed_events.consumer` value unless `processedAs` names another. */
  durable: string;
  /**
   * The `processed_events.consumer` value, when it is not the durable's name: several durables that
   * feed one handler (one filter subject each, as NATS 2.9 allows) record under one name, so one
   * reconciler of that name replays for all of them.
   */
  processedAs?: string;
  /** Subject filter within stream PGW, e.g. `pgw.operations.status.>`. */
  filterSubject: string;
  /** Payload decoder; a throw means the message can never be handled and is terminated. */
  decode: (data: Uint8Array) => T;
  /** The unit's database (`deps.sql`): the handler's transactions and processed_events. */
  db: PgDb<any>;
  log: KitLog;
  /**
   * Work done before the transaction opens, whose result `handle` gets as `prepared`: calls to
   * other units belong here, so no connection or lock is held while they run. It runs again on a
   * redelivery, even of an event handled before, so it must be safe to repeat. Throwing counts as
   * a failure of the event (redelivered later).
   */
  prepare?: (event: T, meta: EventMeta) => Promise<P>;
  /**
   * Applies the event inside the consumer's transaction `tx`. Throwing rolls everything back and
   * the message is redelivered later. Without it (a consumer whose work is all in `prepare`) the
   * event is recorded as handled by one statement, with no transaction around it.
   */
  handle?: (tx: PgTx<any>, event: T, meta: EventMeta, prepared: P) => Promise<void>;
  /**
   * Events this consumer has nothing to do with (e.g. a status it ignores) are acknowledged without
   * a database transaction. Default: every event is relevant.
   */
  relevant?: (event: T) => boolean;
  /** JetStream ack wait, ms (default 30000). Long handlers are kept alive with progress acks. */
  ackWaitMs?: number;
  /** Deliveries before JetStream gives up on a message (default -1: unlimited). */
  maxDeliver?: number;
  /** Redelivery delay after the first failure, doubled per attempt (default 1000 ms) ... */
  retryDelayMs?: number;
  /** ... up to this much (default 60000 ms). */
  maxRetryDelayMs?: number;
  /** Messages pulled ahead of processing (default 10; at least `concurrency`). */
  batchSize?: number;
  /**
   * Events handled at once by this process (default 1: one after another in stream order). Above
   * 1, events with the same {@link orderKey} still run one after another in stream order, so only
   * unrelated events overtake each other.
   */
  concurrency?: number;
  /** What must keep its order when `concurrency` > 1, e.g. the operation id (default: everything). */
  orderKey?: (event: T) => string;
  /** Timeout of each handler transaction, ms (default 15000). */
  transactionTimeoutMs?: number;
}

/**
 * Runs `prepare`, then `handle` in one transaction unless `consumer` has already handled that
 * event id (processed_events); without `handle`, only records the id. Answers whether the event
 * was new. Shared by the live consumer and the reconciler.
 */
export async function handleOnce<T, P>(
  db: PgDb<any>,
  consumer: string,
  event: T,
  meta: EventMeta,
  { prepare, handle }: Pick<ConsumerOptions<T, P>, "prepare" | "handle">,
  txOptions: { maxWait?: number; timeout?: number },
): Promise<boolean> {
  const prepared = prepare ? await prepare(event, meta) : (undefined as P);
  const record = async (sql: PgDb<any> | PgTx<any>) => {
    const inserted = await kitTables(sql).insertInto("processedEvents").values({ consumer, eventId: meta.eventId }).onConflict((c) => c.doNothing()).executeTakeFirst();
    return (inserted.numInsertedOrUpdatedRows ?? 0n) > 0n;
  };
  // Nothing to apply: the record is one statement on its own, so BEGIN and COMMIT would only add round trips.
  if (!handle) return record(db);
  return db.$transaction(async (tx) => {
    if (!(await record(tx))) return false;
    await handle(tx, event, meta, prepared);
    return true;
  }, txOptions);
}

/** A running consumer. */
export interface RunningConsumer {
  /** Stops pulling; resolves once the message in flight has been committed (or rolled back). */
  stop(): Promise<void>;
}

const JS_ERR_CONSUMER_NOT_FOUND = 10014;

/** Delay before redelivery number `deliveryCount` + 1: exponential, capped. */
export function retryDelay(deliveryCount: number, firstMs: number, maxMs: number): number {
  const exp = Math.min(Math.max(deliveryCount - 1, 0), 30);
  return Math.min(maxMs, firstMs * 2 ** exp);
}

/**
 * Creates the durable consumer on stream PGW (explicit ack, deliver all) or updates its ack wait
 * and max deliver when they differ. A durable whose filter differs is replaced by one with the new
 * filter that starts after the last message the old one had acknowledged in order: NATS 2.9 accepts
 * an update from a literal filter to a wildcard one but goes on matching by the literal, so nothing
 * of the new filter arrived until the server restarted. Safe when several processes run it at once.
 */
export async function ensureDurableConsumer(
  jsm: JetStreamManager,
  cfg: { durable: string; filterSubject: string; ackWaitMs: number; maxDeliver: number },
): Promise<void> {
  const want: Partial<ConsumerConfig> = {
    durable_name: cfg.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: cfg.filterSubject,
    ack_wait: nanos(cfg.ackWaitMs),
    max_deliver: cfg.maxDeliver,
  };
  for (let attempt = 0; ; attempt++) {
    let info: ConsumerInfo | null = null;
    try {
      info = await jsm.consumers.info(STREAM_NAME, cfg.durable);
    } catch (err) {
      if (jsErrorCode(err) !== JS_ERR_CONSUMER_NOT_FOUND) throw err;
    }
    try {
      if (!info) {
        await jsm.consumers.add(STREAM_NAME, want);
      } else if (info.config.filter_subject !== want.filter_subject) {
        await jsm.consumers.delete(STREAM_NAME, cfg.durable).catch((err: unknown) => {
          if (jsErrorCode(err) !== JS_ERR_CONSUMER_NOT_FOUND) throw err; // another replica replaced it first
        });
        await jsm.consumers.add(STREAM_NAME, { ...want, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: info.ack_floor.stream_seq + 1 });
      } else if (info.config.ack_wait !== want.ack_wait || info.config.max_deliver !== want.max_deliver) {
        await jsm.consumers.update(STREAM_NAME, cfg.durable, { ack_wait: want.ack_wait, max_deliver: want.max_deliver });
      }
      return;
    } catch (err) {
      // Lost a race against a replica creating or replacing it: read it again and converge.
      if (attempt >= 2) throw err;
    }
  }
}

/**
 * Starts a durable pull consumer on stream PGW and processes its messages one at a time:
 *
 * 1. `eventId` = the `Nats-Msg-Id` header; a message without a uuid id or whose payload `decode`
 *    rejects is logged and terminated (never redelivered).
 * 2. `prepare`, if given, runs outside any transaction. Then, in one `db.$transaction`: insert
 *    `(processedAs ?? durable, eventId)` into `processed_events`; when it was already there the
 *    event was handled before and `handle` is skipped, otherwise `handle` runs. Without `handle` the
 *    insert runs alone.
 * 3. After the commit the message is acknowledged. When `handle` (or the database) fails, the
 *    transaction rolls back and the message is nak'ed with an exponential delay.
 * 4. All of it runs in a span continuing the trace the event was written in (trace-context.ts).
 *
 * Survives NATS reconnects and recreates the durable when it disappears.
 */
export async function startConsumer<T, P = undefined>(opts: ConsumerOptions<T, P>): Promise<RunningConsumer> {
  const { nc, log, db } = opts;
  const durable = scopedDurable(nc, opts.durable);
  const processedAs = scopedDurable(nc, opts.processedAs ?? opts.durable);
  const ackWaitMs = opts.ackWaitMs ?? 30_000;
  const durableCfg = {
    durable,
    filterSubject: scopedSubject(nc, opts.filterSubject),
    ackWaitMs,
    maxDeliver: opts.maxDeliver ?? -1,
  };
  const retryFirstMs = opts.retryDelayMs ?? 1000;
  const retryMaxMs = opts.maxRetryDelayMs ?? 60_000;
  const txOptions = { maxWait: 5000, timeout: opts.transactionTimeoutMs ?? 15_000 };
  const clog = { durable, subject: opts.filterSubject };

  const jsm = await nc.jetstreamManager();
  await ensureDurableConsumer(jsm, durableCfg);
  const js = nc.jetstream();
  const metrics = eventMetricsOf(nc);
  metrics?.durables.set(opts.durable, durable);
  /** Counts one settled delivery (events_consumed_total). */
  const settled = (outcome: "handled" | "duplicate" | "skipped" | "deferred" | "failed" | "refused") => metrics?.deliveries.inc({ consumer: opts.durable, outcome });

  let stopped = false;
  let messages: ConsumerMessages | undefined;
  let wakeSleep: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wakeSleep = () => {
        clearTimeout(t);
        resolve();
      };
    });

  // term() goes without a reason: servers before 2.10 do not recognise "+TERM <reason>".
  /** Ack operations throw on a closed connection; the server redelivers anyway. */
  const safely = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      log.warn({ ...clog, err }, `consumer: ${what} failed`);
    }
  };

  /** The message's event to handle; undefined when it was settled here (terminated or irrelevant). */
  function decoded(m: JsMsg): { event: T; meta: EventMeta } | undefined {
    const eventId = m.headers?.get("Nats-Msg-Id") ?? "";
    const meta: EventMeta = { eventId, subject: m.subject, redelivered: m.redelivered, storedAt: new Date(Math.floor(m.info.timestampNanos / 1e6)) };
    if (!isUuid(eventId)) {
      log.error({ ...clog, ...meta, seq: m.seq }, "consumer: message without a uuid Nats-Msg-Id; terminated");
      settled("refused");
      safely("term", () => m.term());
      return undefined;
    }
    let event: T;
    try {
      event = opts.decode(m.data);
    } catch (err) {
      log.error({ ...clog, ...meta, seq: m.seq, err }, "consumer: undecodable message; terminated");
      settled("refused");
      safely("term", () => m.term());
      return undefined;
    }
    if (opts.relevant && !opts.relevant(event)) {
      settled("skipped");
      safely("ack", () => m.ack());
      return undefined;
    }
    return { event, meta };
  }

  /** Handles one event in its transaction, then acks it (or naks it with a delay on failure); never throws. */
  async function process(m: JsMsg, event: T, meta: EventMeta): Promise<void> {
    const keepAlive = setInterval(() => safely("progress ack", () => m.working()), Math.max(ackWaitMs / 2, 250));
    keepAlive.unref();
    try {
      const handled = await handleOnce(db, processedAs, event, meta, opts, txOptions);
      clearInterval(keepAlive);
      settled(handled ? "handled" : "duplicate");
      if (!handled) log.info({ ...clog, ...meta }, "consumer: event already processed; acknowledging");
      // Committed but not acknowledged (lost ack, closed connection): the redelivery is recognised
      // through processed_events and acknowledged then, so the ack needs no confirmation round trip.
      if (nc.isClosed()) log.warn({ ...clog, ...meta }, "consumer: connection closed before the ack");
      else safely("ack", () => m.ack());
    } catch (err) {
      clearInterval(keepAlive);
      if (err instanceof EventDeferred) {
        settled("deferred");
        log.debug({ ...clog, ...meta, reason: err.message, retryInMs: err.retryInMs }, "consumer: event deferred");
        safely("nak", () => m.nak(err.retryInMs));
        return;
      }
      const deliveries = m.info.deliveryCount;
      const delay = retryDelay(deliveries, retryFirstMs, retryMaxMs);
      const last = durableCfg.maxDeliver > 0 && deliveries >= durableCfg.maxDeliver;
      settled("failed");
      log.error(
        { ...clog, ...meta, err, deliveries, retryInMs: last ? undefined : delay },
        last ? "consumer: handler failed on the last delivery; giving up" : "consumer: handler failed; will retry",
      );
      safely("nak", () => m.nak(delay));
    }
  }

  async function watchStatus(msgs: ConsumerMessages): Promise<void> {
    for await (const s of await msgs.status()) {
      if (s.type === "heartbeats_missed" || s.type === "consumer_not_found" || s.type === "consumer_deleted" || s.type === "stream_not_found") {
        log.warn({ ...clog, event: s.type, data: s.data }, "consumer: status");
      }
    }
  }

  const concurrency = opts.concurrency ?? 1;
  const lanes = new OrderedLanes(concurrency);
  const loop = (async () => {
    let failures = 0;
    while (!stopped && !nc.isClosed()) {
      try {
        const consumer = await js.consumers.get(STREAM_NAME, durable);
        if (stopped) break;
        const msgs = await consumer.consume({ max_messages: Math.max(opts.batchSize ?? 10, concurrency) });
        messages = msgs;
        void watchStatus(msgs).catch(() => undefined);
        if (stopped) {
          // Stopped while subscribing. Closing a subscription whose first pull is still pending does
          // not resolve (nats.js), so the close is not awaited: stop() must not hang.
          void msgs.close().catch(() => undefined);
          break;
        }
        try {
          for await (const m of msgs) {
            if (stopped) {
              safely("nak", () => m.nak());
              continue;
            }
            const d = decoded(m);
            if (d) await lanes.run(opts.orderKey?.(d.event) ?? "", () => handlingInTrace(m, durable, () => process(m, d.event, d.meta)));
            failures = 0;
          }
        } finally {
          // An iterator nobody reads any more never confirms a close (nats.js): stop() must not wait on it.
          messages = undefined;
        }
      } catch (err) {
        if (stopped || nc.isClosed()) break;
        log.warn({ ...clog, err }, "consumer: pull failed");
      }
      if (stopped || nc.isClosed()) break;
      // The message iterator ended on its own (consumer deleted, ...): recreate and resume.
      await sleep(Math.min(5000, 250 * 2 ** Math.min(failures++, 5)));
      if (stopped || nc.isClosed()) break;
      await ensureDurableConsumer(jsm, durableCfg).catch((err) =>
        log.warn({ ...clog, err }, "consumer: cannot recreate durable consumer"),
      );
    }
  })();

  return {
    async stop() {
      stopped = true;
      metrics?.durables.delete(opts.durable);
      wakeSleep?.();
      await messages?.close().catch(() => undefined);
      await loop;
      await lanes.drained();
    },
  };
}
