import { sql } from "kysely";
import { randomUUID } from "node:crypto";
import type { ConsumerInfo, NatsConnection } from "nats";
import type pg from "pg";
import { ensureDurableConsumer, EventDeferred, handleOnce, startConsumer, type ConsumerOptions, type EventMeta, type RunningConsumer } from "@pgw/kit/events";
import { connectNats, ensureStream, STREAM_NAME } from "@pgw/kit/events";
import { NATS_URL, TestDatabases, memoryLog, uniqueToken, waitFor } from "@pgw/kit/testing";
import { PrivateNatsServer } from "@pgw/kit/testing";
import { pgDbOn, type PgDb, type PgTx, type TransactionOptions } from "@pgw/kit/db";

jest.setTimeout(30_000);

const RUN = uniqueToken();
const SUBJECT_ROOT = `pgw.test.${RUN}`;
const EFFECTS_SQL = `CREATE TABLE "effects" ("n" SERIAL PRIMARY KEY, "event_id" UUID NOT NULL, "note" TEXT NOT NULL);`;
const dbs = new TestDatabases("consumer");
const log = memoryLog();
let nc: NatsConnection;
let pool: pg.Pool;
let db: PgDb;
const consumers: RunningConsumer[] = [];
const durables: { conn: () => NatsConnection; name: string }[] = [];
const servers: PrivateNatsServer[] = [];
const extraConnections: NatsConnection[] = [];

beforeAll(async () => {
  nc = await connectNats(NATS_URL, `kit-consumer-test-${RUN}`, log);
  await ensureStream(nc);
  ({ pool } = await dbs.createWithOutbox(EFFECTS_SQL));
  db = pgDbOn(pool);
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop()));
  const jsm = await nc.jetstreamManager();
  for (const d of durables) await jsm.consumers.delete(STREAM_NAME, d.name).catch(() => undefined);
  await jsm.streams.purge(STREAM_NAME, { filter: `${SUBJECT_ROOT}.>` }).catch(() => undefined);
  for (const c of extraConnections) await c.close().catch(() => undefined);
  for (const s of servers) await s.destroy();
  await nc.close();
  await dbs.dropAll();
});

/** A fresh durable name and subject for one test. */
function names(tag: string) {
  const durable = `kit_${RUN}_${tag}`;
  durables.push({ conn: () => nc, name: durable });
  return { durable, subject: `${SUBJECT_ROOT}.${tag}` };
}

const text = (d: Uint8Array) => new TextDecoder().decode(d);
const bytes = (s: string) => new TextEncoder().encode(s);

/** Publishes with a fresh Nats-Msg-Id, or without one when `withId` is false. */
async function publish(conn: NatsConnection, subject: string, body: string, withId = true) {
  const msgID = withId ? randomUUID() : undefined;
  const ack = await conn.jetstream().publish(subject, bytes(body), msgID ? { msgID } : undefined);
  return { id: msgID ?? "", seq: ack.seq };
}

async function info(conn: NatsConnection, durable: string): Promise<ConsumerInfo> {
  return (await conn.jetstreamManager()).consumers.info(STREAM_NAME, durable);
}

async function effects(eventId: string): Promise<string[]> {
  const res = await pool.query(`SELECT note FROM effects WHERE event_id = $1 ORDER BY n`, [eventId]);
  return res.rows.map((r) => r.note);
}

async function processedRows(durable: string, eventId: string): Promise<number> {
  const res = await pool.query(`SELECT count(*)::int AS n FROM processed_events WHERE consumer = $1 AND event_id = $2`, [
    durable,
    eventId,
  ]);
  return res.rows[0].n;
}

/**
 * A kit database on the shared pool that counts the transactions open at any moment and those
 * committed, and can hold the caller right after a commit (between commit and ack).
 */
function watchedDb() {
  const watched = Object.assign(pgDbOn(pool), { hold: undefined as Promise<void> | undefined, committed: 0, open: 0 });
  const transaction = watched.$transaction;
  watched.$transaction = async <R>(fn: (tx: PgTx) => Promise<R>, options?: TransactionOptions): Promise<R> => {
    watched.open++;
    let result: R;
    try {
      result = await transaction(fn, options);
    } finally {
      watched.open--;
    }
    watched.committed++;
    if (watched.hold) await watched.hold;
    return result;
  };
  return watched;
}

function gate() {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Starts a consumer of `subject` with text payloads on the shared database and NATS (stopped after all tests). */
async function textConsumer<P = undefined>(
  durable: string,
  subject: string,
  options: Omit<ConsumerOptions<string, P>, "nc" | "durable" | "filterSubject" | "decode" | "db" | "log"> & { db?: PgDb },
): Promise<RunningConsumer> {
  const consumer = await startConsumer<string, P>({ nc, durable, filterSubject: subject, decode: text, db, log, ...options });
  consumers.push(consumer);
  return consumer;
}

const insertEffect = (tx: PgTx, meta: EventMeta, note: string) => sql`INSERT INTO effects (event_id, note) VALUES (${meta.eventId}::uuid, ${note})`.execute(tx);

test("a handler failure rolls back and is redelivered; the second attempt commits once", async () => {
  const { durable, subject } = names("retry");
  const attempts: EventMeta[] = [];
  await textConsumer(durable, subject, {
    retryDelayMs: 100,
    handle: async (tx, body, meta) => {
      attempts.push(meta);
      await insertEffect(tx, meta, `${body}#${attempts.length}`);
      if (attempts.length === 1) throw new Error("transient failure");
    },
  });
  const { id, seq } = await publish(nc, subject, "hello");

  await waitFor(async () => attempts.length >= 2 && (await info(nc, durable)).ack_floor.stream_seq >= seq, 10_000, "retry");
  expect(attempts).toEqual([
    { eventId: id, subject, redelivered: false, storedAt: expect.any(Date) },
    { eventId: id, subject, redelivered: true, storedAt: attempts[0].storedAt },
  ]);
  expect(await effects(id)).toEqual(["hello#2"]); // the first attempt's write was rolled back
  expect(await processedRows(durable, id)).toBe(1);
  const ci = await info(nc, durable);
  expect(ci.num_ack_pending).toBe(0);
  expect(ci.num_pending).toBe(0);
  expect(log.lines.some((l) => l.msg === "consumer: handler failed; will retry" && (l.obj as EventMeta).eventId === id)).toBe(true);
});


test("a deferred event rolls back and comes back after its own short delay, not the failure backoff, and is not logged as a failure", async () => {
  const { durable, subject } = names("deferred");
  const attempts: EventMeta[] = [];
  await textConsumer(durable, subject, {
    // A failure would wait a minute: the second attempt within the test's wait can only be the deferral's.
    retryDelayMs: 60_000,
    handle: async (tx, body, meta) => {
      attempts.push(meta);
      await insertEffect(tx, meta, `${body}#${attempts.length}`);
      if (attempts.length === 1) throw new EventDeferred("an earlier event is still on its way", 50);
    },
  });
  const before = log.lines.length;
  const { id, seq } = await publish(nc, subject, "later");

  await waitFor(async () => attempts.length >= 2 && (await info(nc, durable)).ack_floor.stream_seq >= seq, 10_000, "the deferred event's second attempt");
  expect(attempts.map((a) => a.redelivered)).toEqual([false, true]);
  expect(await effects(id)).toEqual(["later#2"]);
  expect(await processedRows(durable, id)).toBe(1);
  const lines = log.lines.slice(before).filter((l) => (l.obj as { durable?: string }).durable === durable);
  expect(lines.map((l) => [l.level, l.msg])).toEqual([["debug", "consumer: event deferred"]]);
});
test("prepare runs before the transaction opens, its result reaches handle, and a failing prepare is retried", async () => {
  const { durable, subject } = names("prepare");
  const counting = watchedDb();
  const openDuringPrepare: number[] = [];
  const release = gate();
  await textConsumer(durable, subject, {
    db: counting,
    retryDelayMs: 100,
    prepare: async (body) => {
      openDuringPrepare.push(counting.open);
      if (openDuringPrepare.length === 1) throw new Error("the other unit is down");
      await release.promise;
      return `${body} prepared`;
    },
    handle: async (tx, _body, meta, prepared) => void (await insertEffect(tx, meta, prepared)),
  });
  const { id, seq } = await publish(nc, subject, "order");

  await waitFor(async () => openDuringPrepare.length === 2, 10_000, "second prepare");
  expect(counting.open).toBe(0); // the retry waits in prepare without a transaction
  expect(await processedRows(durable, id)).toBe(0);
  release.open();
  await waitFor(async () => (await info(nc, durable)).ack_floor.stream_seq >= seq, 10_000, "ack");
  expect(openDuringPrepare).toEqual([0, 0]);
  expect(await effects(id)).toEqual(["order prepared"]);
  expect(await processedRows(durable, id)).toBe(1);
});

test("a consumer whose work is all in prepare records each event once and acknowledges it", async () => {
  const { durable, subject } = names("prepare-only");
  const prepared: string[] = [];
  const counting = watchedDb();
  await textConsumer(durable, subject, { db: counting, prepare: async (body) => void prepared.push(body) });
  const { id, seq } = await publish(nc, subject, "release");
  await waitFor(async () => (await info(nc, durable)).ack_floor.stream_seq >= seq, 10_000, "ack");
  expect(prepared).toEqual(["release"]);
  expect(await processedRows(durable, id)).toBe(1);
  // The record alone needs no transaction; a second handling of the same id is recognised.
  expect(counting.committed).toBe(0);
  const meta = { eventId: id, subject, redelivered: true, storedAt: new Date() };
  const prepareOnly = { prepare: async (body: string) => void prepared.push(body) };
  expect(await handleOnce(counting, durable, "release", meta, prepareOnly, {})).toBe(false);
  expect(counting.committed).toBe(0);
});

test("two durables with one processedAs record their events under that name, not their own", async () => {
  const first = names("shared-a");
  const second = names("shared-b");
  const shared = `kit_${RUN}_shared`;
  const handled: string[] = [];
  const handle = async (_tx: PgTx, body: string) => void handled.push(body);
  await textConsumer(first.durable, first.subject, { processedAs: shared, handle });
  await textConsumer(second.durable, second.subject, { processedAs: shared, handle });
  const a = await publish(nc, first.subject, "a");
  const b = await publish(nc, second.subject, "b");
  await waitFor(async () => (await info(nc, first.durable)).ack_floor.stream_seq >= a.seq && (await info(nc, second.durable)).ack_floor.stream_seq >= b.seq, 10_000, "acks");
  expect(handled.sort()).toEqual(["a", "b"]);
  for (const { id } of [a, b]) expect([await processedRows(shared, id), await processedRows(first.durable, id), await processedRows(second.durable, id)]).toEqual([1, 0, 0]);
});

test("acknowledges only after the transaction committed", async () => {
  const { durable, subject } = names("ackorder");
  const held = watchedDb();
  const inHandler = gate();
  const afterCommit = gate();
  held.hold = afterCommit.promise;
  let entered = false;
  consumers.push(
    await startConsumer({
      nc,
      durable,
      filterSubject: subject,
      decode: text,
      db: held,
      log,
      handle: async (tx, body, meta) => {
        await insertEffect(tx, meta, body);
        entered = true;
        await inHandler.promise;
      },
    }),
  );
  const { id, seq } = await publish(nc, subject, "once");

  // Inside the handler: nothing committed, nothing acknowledged.
  await waitFor(() => entered, 10_000, "handler entered");
  expect(await effects(id)).toEqual([]);
  let ci = await info(nc, durable);
  expect(ci.num_ack_pending).toBe(1);
  expect(ci.ack_floor.stream_seq).toBeLessThan(seq);

  // Committed but held before the ack: the write is visible, the message still unacknowledged.
  inHandler.open();
  await waitFor(() => held.committed === 1, 5000, "commit");
  expect(await effects(id)).toEqual(["once"]);
  await new Promise((r) => setTimeout(r, 200));
  ci = await info(nc, durable);
  expect(ci.num_ack_pending).toBe(1);
  expect(ci.ack_floor.stream_seq).toBeLessThan(seq);

  afterCommit.open();
  await waitFor(async () => (await info(nc, durable)).ack_floor.stream_seq >= seq, 5000, "ack");
  expect((await info(nc, durable)).num_ack_pending).toBe(0);
});

test("a redelivery after a crash between commit and ack is recognised and not handled again", async () => {
  const { durable, subject } = names("crash");
  // Replica 1 commits, then "crashes" before it can acknowledge: its connection is closed.
  const nc1 = await connectNats(NATS_URL, `kit-consumer-crash-${RUN}`, log);
  extraConnections.push(nc1);
  const held = watchedDb();
  const stuck = gate();
  held.hold = stuck.promise;
  let handled1 = 0;
  const c1 = await startConsumer({
    nc: nc1,
    durable,
    filterSubject: subject,
    decode: text,
    db: held,
    log,
    ackWaitMs: 1000,
    handle: async (tx, body, meta) => {
      handled1++;
      await insertEffect(tx, meta, body);
    },
  });
  const { id, seq } = await publish(nc, subject, "money moved");
  await waitFor(async () => (await effects(id)).length === 1, 10_000, "replica 1 commit");
  expect((await info(nc, durable)).num_ack_pending).toBe(1);
  await nc1.close();

  // Replica 2 (same durable) receives the redelivery once the ack wait lapses.
  const seenBy2: EventMeta[] = [];
  consumers.push(
    await startConsumer({
      nc,
      durable,
      filterSubject: subject,
      decode: text,
      db,
      log,
      ackWaitMs: 1000,
      handle: async (tx, body, meta) => {
        seenBy2.push(meta);
        await insertEffect(tx, meta, `${body} again`);
      },
    }),
  );
  await waitFor(async () => (await info(nc, durable)).ack_floor.stream_seq >= seq, 15_000, "redelivery acknowledged");

  expect(handled1).toBe(1);
  expect(seenBy2).toEqual([]);
  expect(await effects(id)).toEqual(["money moved"]);
  expect(await processedRows(durable, id)).toBe(1);
  expect(
    log.lines.some((l) => l.msg === "consumer: event already processed; acknowledging" && (l.obj as EventMeta).eventId === id),
  ).toBe(true);
  const ci = await info(nc, durable);
  expect(ci.num_ack_pending).toBe(0);
  expect(ci.delivered.consumer_seq).toBeGreaterThanOrEqual(2); // delivered twice, handled once

  stuck.open();
  await c1.stop();
});

test("an undecodable message or one without an event id is terminated, not retried; later ones flow", async () => {
  const { durable, subject } = names("poison");
  const decoded: string[] = [];
  const handled: string[] = [];
  consumers.push(
    await startConsumer({
      nc,
      durable,
      filterSubject: subject,
      db,
      log,
      retryDelayMs: 50,
      decode: (d) => {
        const body = text(d);
        decoded.push(body);
        if (body === "garbage") throw new Error("cannot decode");
        return body;
      },
      handle: async (tx, body, meta) => {
        handled.push(body);
        await insertEffect(tx, meta, body);
      },
    }),
  );
  await publish(nc, subject, "garbage");
  await publish(nc, subject, "no id", false);
  const good = await publish(nc, subject, "good");

  await waitFor(async () => (await info(nc, durable)).ack_floor.stream_seq >= good.seq, 10_000, "all settled");
  await new Promise((r) => setTimeout(r, 500)); // a redelivery (if any) would arrive within this time
  expect(handled).toEqual(["good"]);
  expect(decoded.filter((d) => d === "garbage")).toHaveLength(1);
  expect(decoded).not.toContain("no id");
  const ci = await info(nc, durable);
  expect(ci.num_ack_pending).toBe(0);
  expect(ci.num_redelivered).toBe(0);
  expect(log.lines.filter((l) => /terminated/.test(l.msg ?? "")).length).toBeGreaterThanOrEqual(2);
});

test("keeps consuming across a NATS server restart", async () => {
  const server = await PrivateNatsServer.start();
  servers.push(server);
  const pnc = await connectNats(server.url, `kit-consumer-restart-${RUN}`, log);
  extraConnections.push(pnc);
  await ensureStream(pnc);
  const subject = `${SUBJECT_ROOT}.restart`;
  const handled: string[] = [];
  const c = await startConsumer({
    nc: pnc,
    durable: "restart",
    filterSubject: subject,
    decode: text,
    db,
    log,
    handle: async (tx, body, meta) => {
      handled.push(body);
      await insertEffect(tx, meta, body);
    },
  });
  consumers.push(c);
  await publish(pnc, subject, "before");
  await waitFor(() => handled.length === 1, 10_000, "first event");

  await server.kill();
  await server.start();
  await waitFor(
    () =>
      publish(pnc, subject, "after").then(
        () => true,
        () => false,
      ),
    15_000,
    "publish after restart",
    200,
  );
  await waitFor(() => handled.includes("after"), 15_000, "event after restart");
  expect(handled).toEqual(["before", "after"]);
});

test("with concurrency, events of different keys are handled at once and one key's events stay in stream order", async () => {
  const { durable, subject } = names("lanes");
  const started: string[] = [];
  const finished: string[] = [];
  const slowA = gate();
  let inFlight = 0;
  let most = 0;
  consumers.push(
    await startConsumer({
      nc,
      durable,
      filterSubject: subject,
      decode: text,
      db,
      log,
      concurrency: 4,
      orderKey: (body) => body.split(":")[0],
      handle: async (tx, body, meta) => {
        started.push(body);
        most = Math.max(most, ++inFlight);
        if (body === "a:1") await slowA.promise;
        await insertEffect(tx, meta, body);
        inFlight--;
        finished.push(body);
      },
    }),
  );
  for (const body of ["a:1", "a:2", "b:1", "c:1", "b:2"]) await publish(nc, subject, body);
  // a:1 is held: the other keys finish meanwhile, a:2 has not even started.
  await waitFor(async () => finished.length === 3, 10_000, "b and c handled while a:1 is held");
  expect([...finished].sort()).toEqual(["b:1", "b:2", "c:1"]);
  expect(started).not.toContain("a:2");
  slowA.open();
  await waitFor(async () => finished.length === 5, 10_000, "a handled");
  expect(finished.slice(3)).toEqual(["a:1", "a:2"]);
  expect(most).toBeGreaterThanOrEqual(2);
  await waitFor(async () => (await info(nc, durable)).num_ack_pending === 0, 10_000, "all acknowledged");
});

test("stopping right after the start resolves (the subscription may still be opening)", async () => {
  const { durable, subject } = names("quickstop");
  const c = await startConsumer({ nc, durable, filterSubject: subject, decode: text, db, log, handle: async () => undefined });
  const stopped = await Promise.race([c.stop().then(() => "stopped"), new Promise((r) => setTimeout(() => r("hung"), 5000))]);
  expect(stopped).toBe("stopped");
});

test("a durable whose filter changed receives the new filter's messages from where it stopped, none it acknowledged before", async () => {
  const { durable, subject } = names("refiltered");
  const handled: string[] = [];
  const handle = async (_tx: PgTx, body: string) => void handled.push(body);
  // A literal filter, as pgw.operation.status_changed was before it had a token per status.
  const first = await startConsumer({ nc, durable, filterSubject: `${subject}.kept.1`, decode: text, db, log, handle });
  const { seq } = await publish(nc, `${subject}.kept.1`, "acknowledged under the old filter");
  await waitFor(async () => (await info(nc, durable)).ack_floor.stream_seq >= seq, 10_000, "first ack");
  await first.stop();
  await publish(nc, `${subject}.kept.2`, "published while stopped");
  await publish(nc, `${subject}.dropped`, "outside both filters");

  // NATS 2.9 took an update of the filter but went on matching by the literal: nothing arrived.
  await textConsumer(durable, `${subject}.kept.>`, { handle });
  const late = await publish(nc, `${subject}.kept.3`, "published after the change");
  await waitFor(async () => handled.length >= 3, 10_000, "messages of the new filter");
  await waitFor(async () => (await info(nc, durable)).ack_floor.stream_seq >= late.seq, 10_000, "acks");
  expect(handled).toEqual(["acknowledged under the old filter", "published while stopped", "published after the change"]);
  expect((await info(nc, durable)).config.filter_subject).toBe(`${subject}.kept.>`);
});

test("replicas that replace a durable's filter at the same moment all start, on one durable with the new filter", async () => {
  const { durable, subject } = names("refiltered-race");
  const first = await startConsumer({ nc, durable, filterSubject: `${subject}.old`, decode: text, db, log, handle: async () => undefined });
  await first.stop();
  const jsm = await nc.jetstreamManager();
  const cfg = { durable, filterSubject: `${subject}.new.>`, ackWaitMs: 30_000, maxDeliver: -1 };
  const outcomes = await Promise.allSettled([1, 2, 3, 4].map(() => ensureDurableConsumer(jsm, cfg)));
  expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "fulfilled"]);
  expect((await info(nc, durable)).config.filter_subject).toBe(`${subject}.new.>`);
  expect((await jsm.consumers.list(STREAM_NAME).next()).filter((c) => c.name === durable)).toHaveLength(1);
});
