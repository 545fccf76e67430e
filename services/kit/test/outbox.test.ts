import { sql } from "kysely";
import { randomUUID } from "node:crypto";
import { AckPolicy, DeliverPolicy, type NatsConnection } from "nats";
import type pg from "pg";
import { connectNats, ensureStream, STREAM_NAME } from "@pgw/kit/events";
import { changeWithEvent, enqueueEvent, OUTBOX_CHANNEL, OutboxRelay, type OutboxEvent } from "@pgw/kit/events";
import { listenForNotify } from "@pgw/kit/db";
import { NATS_URL, TestDatabases, memoryLog, recordingDb, uniqueToken, waitFor } from "@pgw/kit/testing";
import { PrivateNatsServer } from "@pgw/kit/testing";
import { pgDbOn, type PgDb, type PgTx } from "@pgw/kit/db";

jest.setTimeout(30_000);

const RUN = uniqueToken();
const SUBJECT_ROOT = `pgw.test.${RUN}`;
const dbs = new TestDatabases("outbox");
const log = memoryLog();
let nc: NatsConnection;
const relays: OutboxRelay[] = [];
const servers: PrivateNatsServer[] = [];
const extraConnections: NatsConnection[] = [];

beforeAll(async () => {
  nc = await connectNats(NATS_URL, `kit-outbox-test-${RUN}`, log);
  await ensureStream(nc);
});

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  for (const c of extraConnections) await c.close().catch(() => undefined);
  for (const s of servers) await s.destroy();
  const jsm = await nc.jetstreamManager();
  await jsm.streams.purge(STREAM_NAME, { filter: `${SUBJECT_ROOT}.>` }).catch(() => undefined);
  await nc.close();
  await dbs.dropAll();
});

/** A NATS server of this test's own (to stop and start), a connection to it, and the stream. */
async function privateNats(name: string) {
  const server = await PrivateNatsServer.start();
  servers.push(server);
  const pnc = await connectNats(server.url, `kit-outbox-${name}-${RUN}`, log);
  extraConnections.push(pnc);
  await ensureStream(pnc);
  return { server, pnc };
}

function newRelay(db: PgDb, conn: NatsConnection, extra: Partial<ConstructorParameters<typeof OutboxRelay>[0]> = {}) {
  const relay = new OutboxRelay({ db, nc: conn, log, ...extra });
  relays.push(relay);
  return relay;
}

interface StoredEvent {
  msgId: string | undefined;
  subject: string;
  data: string;
}

/** Every message stored in stream PGW under `filter`, read with a throw-away consumer. */
async function readStream(conn: NatsConnection, filter: string): Promise<StoredEvent[]> {
  const jsm = await conn.jetstreamManager();
  const name = `read_${uniqueToken()}`;
  await jsm.consumers.add(STREAM_NAME, {
    durable_name: name,
    filter_subject: filter,
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.All,
  });
  try {
    const info = await jsm.consumers.info(STREAM_NAME, name);
    const total = info.num_pending;
    const consumer = await conn.jetstream().consumers.get(STREAM_NAME, name);
    const out: StoredEvent[] = [];
    while (out.length < total) {
      const batch = await consumer.fetch({ max_messages: 500, expires: 1000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        out.push({ msgId: m.headers?.get("Nats-Msg-Id"), subject: m.subject, data: new TextDecoder().decode(m.data) });
      }
      if (got === 0) break;
    }
    return out;
  } finally {
    await jsm.consumers.delete(STREAM_NAME, name).catch(() => undefined);
  }
}

async function unpublished(pool: pg.Pool): Promise<number> {
  const res = await pool.query(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
  return res.rows[0].n;
}

const bytes = (s: string) => new TextEncoder().encode(s);

test("committed events are published once with Nats-Msg-Id = event id; a rolled-back transaction publishes nothing", async () => {
  const { pool } = await dbs.createWithOutbox();
  const db = pgDbOn(pool);
  const subject = `${SUBJECT_ROOT}.basic`;

  const givenId = randomUUID();
  const ids = await db.$transaction(async (tx) => [
    await enqueueEvent(tx, subject, bytes("one")),
    await enqueueEvent(tx, subject, bytes("two")),
    await enqueueEvent(tx, subject, bytes("three"), givenId),
  ]);
  expect(ids[2]).toBe(givenId);
  expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

  let rolledBackId = "";
  await expect(
    db.$transaction(async (tx) => {
      rolledBackId = await enqueueEvent(tx, subject, bytes("never"));
      throw new Error("business failure");
    }),
  ).rejects.toThrow("business failure");
  expect(rolledBackId).not.toBe("");

  const relay = newRelay(db, nc, { idleMs: 5000 });
  relay.start();
  relay.nudge();
  await waitFor(async () => (await unpublished(pool)) === 0, 10_000, "rows published");
  await relay.stop();

  const rows = await pool.query(`SELECT id::text AS id, published_at FROM outbox ORDER BY id`);
  expect(rows.rows.map((r) => r.id)).toEqual([...ids].sort());
  for (const r of rows.rows) expect(r.published_at).toBeInstanceOf(Date);

  const stored = await readStream(nc, subject);
  expect(stored).toEqual([
    { msgId: ids[0], subject, data: "one" },
    { msgId: ids[1], subject, data: "two" },
    { msgId: ids[2], subject, data: "three" },
  ]);
  expect(stored.map((s) => s.msgId)).not.toContain(rolledBackId);
});

test("nudge publishes promptly even with a long idle interval", async () => {
  const { pool } = await dbs.createWithOutbox();
  const db = pgDbOn(pool);
  const subject = `${SUBJECT_ROOT}.nudge`;
  const relay = newRelay(db, nc, { idleMs: 60_000 });
  relay.start();
  await new Promise((r) => setTimeout(r, 200)); // the first (empty) pass has run; the relay now idles for 60 s

  await db.$transaction((tx) => enqueueEvent(tx, subject, bytes("now")));
  const started = Date.now();
  relay.nudge();
  await waitFor(async () => (await unpublished(pool)) === 0, 5000, "nudged publish", 10);
  expect(Date.now() - started).toBeLessThan(2000);
  await relay.stop();
});

test("a committed row wakes a listening relay through NOTIFY, without a nudge", async () => {
  const { url, pool } = await dbs.createWithOutbox();
  const db = pgDbOn(pool);
  const subject = `${SUBJECT_ROOT}.notify`;
  const relay = newRelay(db, nc, { idleMs: 60_000 });
  relay.start();
  const listener = listenForNotify(url, OUTBOX_CHANNEL, log, () => relay.nudge());
  await new Promise((r) => setTimeout(r, 300)); // listening, and the relay idles for 60 s

  await db.$transaction((tx) => enqueueEvent(tx, subject, bytes("notified")));
  const started = Date.now();
  await waitFor(async () => (await unpublished(pool)) === 0, 5000, "notified publish", 10);
  expect(Date.now() - started).toBeLessThan(2000);
  await listener.stop();
  await relay.stop();
});

/** Counts NOTIFYs on the outbox channel of the database at `url` from once it listens. */
async function countNotifies(url: string) {
  let notifies = 0;
  const listener = listenForNotify(url, OUTBOX_CHANNEL, log, () => void notifies++);
  await new Promise((r) => setTimeout(r, 300));
  const onListening = notifies; // the listener's own call once it listens
  expect(onListening).toBe(1);
  return { count: () => notifies - onListening, stop: () => listener.stop() };
}

test("a kit pg transaction whose client listens to the outbox channel wakes the listener at commit instead of sending NOTIFY; a rollback wakes nothing", async () => {
  const { url, pool } = await dbs.createWithOutbox();
  const db = pgDbOn(pool);
  const subject = `${SUBJECT_ROOT}.committed`;
  const relay = newRelay(db, nc, { idleMs: 60_000 });
  let commits = 0;
  db.onCommit(OUTBOX_CHANNEL, () => {
    commits++;
    relay.nudge();
  });
  relay.start();
  const notifies = await countNotifies(url); // the relay's first (empty) pass has run meanwhile

  const started = Date.now();
  const ids = await db.$transaction(async (tx) => [await enqueueEvent(tx, subject, bytes("a")), await enqueueEvent(tx, subject, bytes("b"))]);
  expect(commits).toBe(1); // once per transaction, when its COMMIT returned
  await waitFor(async () => (await unpublished(pool)) === 0, 5000, "published after the commit", 10);
  expect(Date.now() - started).toBeLessThan(1000);
  await expect(
    db.$transaction(async (tx) => {
      await enqueueEvent(tx, subject, bytes("never"));
      throw new Error("business failure");
    }),
  ).rejects.toThrow("business failure");
  await db.$transaction(async (tx) => sql`SELECT 1`.execute(tx)); // no outbox row: no call
  await new Promise((r) => setTimeout(r, 300));
  await notifies.stop();

  expect(commits).toBe(1);
  expect(notifies.count()).toBe(0);
  expect(await readStream(nc, subject)).toEqual([
    { msgId: ids[0], subject, data: "a" },
    { msgId: ids[1], subject, data: "b" },
  ]);
  await relay.stop();
});

test("events handed over at commit go out in commit order with no transaction and no read of the table, marked in one statement per pass", async () => {
  const { pool } = await dbs.createWithOutbox();
  const producer = pgDbOn(pool);
  const subject = `${SUBJECT_ROOT}.handed`;
  const recorded = recordingDb(pool);
  const relay = newRelay(recorded.db, nc, { idleMs: 60_000 });
  producer.onCommit<OutboxEvent>(OUTBOX_CHANNEL, (events) => relay.handOver(events));
  relay.start();
  await new Promise((r) => setTimeout(r, 200)); // its first pass over the (empty) table has run
  recorded.statements.length = 0;

  const ids: string[] = [];
  for (let t = 0; t < 3; t++) {
    ids.push(...(await producer.$transaction(async (tx) => [await enqueueEvent(tx, subject, bytes(`${t}a`)), await enqueueEvent(tx, subject, bytes(`${t}b`))])));
  }
  await waitFor(async () => (await unpublished(pool)) === 0, 5000, "handed-over events published", 10);
  await relay.stop();

  expect(recorded.transactions()).toBe(0);
  const statements = recorded.outside();
  expect(statements).toHaveLength(recorded.statements.length); // every one outside a transaction
  expect(statements.length).toBeGreaterThan(0);
  expect(statements.length).toBeLessThanOrEqual(3);
  for (const q of statements) expect(q).toMatch(/^update "outbox" set "published_at"/);
  expect((await readStream(nc, subject)).map((e) => [e.msgId, e.data])).toEqual(ids.map((id, i) => [id, `${Math.floor(i / 2)}${i % 2 ? "b" : "a"}`]));
});

test("handed-over events are marked published together, every markEveryMs, and what is left when the relay stops", async () => {
  const { pool } = await dbs.createWithOutbox();
  const producer = pgDbOn(pool);
  const subject = `${SUBJECT_ROOT}.marks`;
  const recorded = recordingDb(pool);
  const relay = newRelay(recorded.db, nc, { idleMs: 60_000, markEveryMs: 60_000 });
  producer.onCommit<OutboxEvent>(OUTBOX_CHANNEL, (events) => relay.handOver(events));
  relay.start();
  await new Promise((r) => setTimeout(r, 200)); // its first pass over the (empty) table has run

  const ids: string[] = [];
  for (let t = 0; t < 3; t++) ids.push(await producer.$transaction((tx) => enqueueEvent(tx, subject, bytes(`m${t}`))));
  await waitFor(async () => (await readStream(nc, subject)).length === 3, 5000, "all three published", 50);
  expect(await unpublished(pool)).toBe(3); // published, not yet marked
  expect(recorded.outside()).toEqual([]);
  await relay.stop();
  expect(await unpublished(pool)).toBe(0);
  expect(recorded.outside()).toEqual([expect.stringMatching(/^update "outbox" set "published_at"/)]);
});

test("a handed-over event whose publish failed stays unmarked and goes out with a later pass over the table", async () => {
  const { server, pnc } = await privateNats("handed");
  const { pool } = await dbs.createWithOutbox();
  const producer = pgDbOn(pool);
  const subject = `${SUBJECT_ROOT}.handedfail`;
  const relay = newRelay(pgDbOn(pool), pnc, { idleMs: 60_000, publishTimeoutMs: 300, minBackoffMs: 50, maxBackoffMs: 200 });
  producer.onCommit<OutboxEvent>(OUTBOX_CHANNEL, (events) => relay.handOver(events));
  relay.start();
  const enqueue = (label: string) => producer.$transaction((tx) => enqueueEvent(tx, subject, bytes(label)));

  const ids = [await enqueue("before")];
  await waitFor(async () => (await unpublished(pool)) === 0, 5000, "first event published", 10);
  await server.kill();
  ids.push(await enqueue("during-1"), await enqueue("during-2"));
  await new Promise((r) => setTimeout(r, 1000));
  expect(await unpublished(pool)).toBe(2);

  await server.start(); // no new commit and no nudge: only the relay's own retry can find them
  await waitFor(async () => (await unpublished(pool)) === 0, 20_000, "failed events published after the restart", 100);
  await relay.stop();
  const stored = await readStream(pnc, subject);
  expect(stored.map((e) => e.msgId).sort()).toEqual([...ids].sort());
});

test("changeWithEvent writes the event in the statement that changed a row and hands it over when it returns, or at commit in a transaction; no row changed, no event", async () => {
  const { url, pool } = await dbs.createWithOutbox();
  await pool.query(`CREATE TABLE things (id int PRIMARY KEY, state text NOT NULL)`);
  await pool.query(`INSERT INTO things VALUES (1, 'new')`);
  const db = pgDbOn<{ things: { id: number; state: string } }>(pool);
  const handed: OutboxEvent[][] = [];
  db.onCommit<OutboxEvent>(OUTBOX_CHANNEL, (events) => void handed.push(events));
  const notifies = await countNotifies(url);
  const move = async (on: typeof db | PgTx<{ things: { id: number; state: string } }>, from: string, to: string, label: string) => {
    const rows = await changeWithEvent(on, on.updateTable("things").set({ state: to }).where("id", "=", 1).where("state", "=", from).returning(["id", "state"]), {
      id: randomUUID(),
      subject: "s",
      payload: bytes(label),
    });
    // Typed as the change's RETURNING says.
    return rows.map((r): { id: number; state: string } => r);
  };

  expect(await move(db, "new", "done", "moved")).toEqual([{ id: 1, state: "done" }]);
  expect(await move(db, "new", "done", "not moved")).toEqual([]); // the row has moved on: no event
  await expect(
    db.$transaction(async (tx) => {
      await move(tx, "done", "undone", "rolled back");
      throw new Error("rolled back");
    }),
  ).rejects.toThrow("rolled back");
  await db.$transaction((tx) => move(tx, "done", "archived", "in a transaction"));
  await new Promise((r) => setTimeout(r, 300));
  await notifies.stop();

  const rows = await pool.query(`SELECT encode(payload, 'escape') AS label FROM outbox ORDER BY created_at`);
  expect(rows.rows.map((r) => r.label)).toEqual(["moved", "in a transaction"]);
  expect((await pool.query(`SELECT state FROM things`)).rows).toEqual([{ state: "archived" }]);
  // Handed over, never notified: the statement alone when it returns, the transaction's at its commit, the rolled-back one never.
  expect(handed.map((events) => events.map((e) => new TextDecoder().decode(e.payload)))).toEqual([["moved"], ["in a transaction"]]);
  expect(notifies.count()).toBe(0);

  // Where no relay listens, the database notifies every relay at commit instead.
  const unheard = pgDbOn<{ things: { id: number; state: string } }>(pool);
  const notified = await countNotifies(url);
  await unheard.$transaction((tx) => move(tx, "archived", "reopened", "unheard"));
  await waitFor(async () => notified.count() === 1, 5000, "the NOTIFY at commit", 20);
  await notified.stop();
});

/** Publishes on `subject` per event id, seen by a core subscription: every publish, including ones JetStream de-duplicates. */
async function countPublishes(subject: string) {
  const seen = new Map<string, number>();
  const sub = nc.subscribe(subject, {
    callback: (_err, m) => {
      const id = m.headers?.get("Nats-Msg-Id") ?? "?";
      seen.set(id, (seen.get(id) ?? 0) + 1);
    },
  });
  await nc.flush();
  return { seen, sub };
}

test("two relays on one table publish every row exactly once", async () => {
  const { pool } = await dbs.createWithOutbox();
  const db = pgDbOn(pool);
  const subject = `${SUBJECT_ROOT}.pair`;
  const { seen, sub } = await countPublishes(subject);

  const ids: string[] = [];
  for (let t = 0; t < 20; t++) {
    ids.push(
      ...(await db.$transaction(async (tx) => {
        const out: string[] = [];
        for (let i = 0; i < 10; i++) out.push(await enqueueEvent(tx, subject, bytes(`${t}.${i}`)));
        return out;
      })),
    );
  }
  const a = newRelay(pgDbOn(pool), nc, { batchSize: 7, idleMs: 20 });
  const b = newRelay(pgDbOn(pool), nc, { batchSize: 7, idleMs: 20 });
  a.start();
  b.start();
  await waitFor(async () => (await unpublished(pool)) === 0, 15_000, "all rows published");
  await Promise.all([a.stop(), b.stop()]);
  await nc.flush();
  await waitFor(() => seen.size === ids.length, 2000, "core deliveries");
  sub.unsubscribe();

  expect([...seen.keys()].sort()).toEqual([...ids].sort());
  expect([...seen.values()].every((n) => n === 1)).toBe(true);
  const stored = await readStream(nc, subject);
  expect(stored).toHaveLength(ids.length);
  expect(new Set(stored.map((s) => s.msgId))).toEqual(new Set(ids));
});

test("a replica's periodic pass leaves the events another replica's relay was handed at commit to that relay: each is published once", async () => {
  const { pool } = await dbs.createWithOutbox();
  const subject = `${SUBJECT_ROOT}.handedpair`;
  const { seen, sub } = await countPublishes(subject);
  // Replica a commits and hands its events to its relay, which marks them every 200 ms; replica b
  // has nothing handed over and reads the table as often as it can.
  const producer = pgDbOn(pool);
  const a = newRelay(pgDbOn(pool), nc, { idleMs: 60_000, markEveryMs: 200 });
  producer.onCommit<OutboxEvent>(OUTBOX_CHANNEL, (events) => a.handOver(events));
  const b = newRelay(pgDbOn(pool), nc, { idleMs: 5 });
  a.start();
  b.start();
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) ids.push(await producer.$transaction((tx) => enqueueEvent(tx, subject, bytes(`handed-${i}`))));
  await waitFor(async () => (await unpublished(pool)) === 0, 10_000, "all rows published");
  await Promise.all([a.stop(), b.stop()]);
  await nc.flush();
  await waitFor(() => seen.size === ids.length, 2000, "core deliveries");
  sub.unsubscribe();
  expect([...seen.entries()].filter(([, n]) => n > 1)).toEqual([]);
  expect([...seen.keys()].sort()).toEqual([...ids].sort());
});

test("survives a NATS server restart: nothing lost, everything marked published after its PubAck", async () => {
  const { server, pnc } = await privateNats("restart");
  const { pool } = await dbs.createWithOutbox();
  const db = pgDbOn(pool);
  const subject = `${SUBJECT_ROOT}.restart`;
  const enqueue = (label: string) => db.$transaction((tx) => enqueueEvent(tx, subject, bytes(label)));

  const relay = newRelay(db, pnc, { idleMs: 50, publishTimeoutMs: 500 });
  relay.start();
  const ids = [await enqueue("before-1"), await enqueue("before-2"), await enqueue("before-3")];
  relay.nudge();
  await waitFor(async () => (await unpublished(pool)) === 0, 10_000, "first events published");

  await server.kill();
  for (let i = 1; i <= 5; i++) ids.push(await enqueue(`during-${i}`));
  relay.nudge();
  // While the server is down nothing can be acknowledged, so nothing is marked published.
  await new Promise((r) => setTimeout(r, 1500));
  expect(await unpublished(pool)).toBe(5);
  expect(log.lines.some((l) => l.msg === "outbox relay: publish failed, retrying")).toBe(true);

  await server.start();
  ids.push(await enqueue("after-1"));
  relay.nudge();
  await waitFor(async () => (await unpublished(pool)) === 0, 20_000, "events published after restart", 100);
  await relay.stop();

  // Every event exactly once. (Order is created_at order, whose millisecond ties are not ordered.)
  const stored = await readStream(pnc, subject);
  expect(stored).toHaveLength(ids.length);
  expect(stored.map((s) => s.msgId).sort()).toEqual([...ids].sort());
  expect(stored.map((s) => s.data).sort()).toEqual(
    ["before-1", "before-2", "before-3", "during-1", "during-2", "during-3", "during-4", "during-5", "after-1"].sort(),
  );
});

/** A started relay (idle poll 60 s) on a fresh outbox that has run its first, empty pass, with its transactions counted from here. */
async function idleRelay(subjectLeaf: string, gatherMs: number) {
  const { pool } = await dbs.createWithOutbox();
  const db = pgDbOn(pool);
  const counted = recordingDb(pool);
  const relay = newRelay(counted.db, nc, { idleMs: 60_000, gatherMs });
  relay.start();
  await new Promise((r) => setTimeout(r, 200));
  counted.statements.length = 0;
  return { pool, db, counted, subject: `${SUBJECT_ROOT}.${subjectLeaf}`, relay };
}

test("a busy relay gathers what commits meanwhile into one batch; an idle one publishes at once", async () => {
  const { pool, db, counted, subject, relay } = await idleRelay("gather", 300);

  // Idle: the first event goes out at once.
  await db.$transaction((tx) => enqueueEvent(tx, subject, bytes("first")));
  const started = Date.now();
  relay.nudge();
  await waitFor(async () => (await unpublished(pool)) === 0, 5000, "first published", 10);
  expect(Date.now() - started).toBeLessThan(250);
  // Busy (it just published): five events committed within the gather window share one pass.
  for (let i = 0; i < 5; i++) {
    await db.$transaction((tx) => enqueueEvent(tx, subject, bytes(`e${i}`)));
    relay.nudge();
  }
  await waitFor(async () => (await unpublished(pool)) === 0, 5000, "all published", 10);
  expect(counted.transactions()).toBe(2); // the first event's pass and one for the five
  await relay.stop();
});

test("after publishing what it was nudged for, a relay runs no further (empty) pass until nudged again", async () => {
  const { pool, db, counted, subject, relay } = await idleRelay("quiet", 50);
  for (const [i, body] of ["one", "two"].entries()) {
    await db.$transaction((tx) => enqueueEvent(tx, subject, bytes(body)));
    const started = Date.now();
    relay.nudge();
    await waitFor(async () => (await unpublished(pool)) === 0, 5000, `${body} published`, 10);
    expect(Date.now() - started).toBeLessThan(250); // still at once after a busy pass
    await new Promise((r) => setTimeout(r, 300)); // well past the gather window
    expect(counted.transactions()).toBe(i + 1); // one pass per event, none that finds nothing
  }
  await relay.stop();
});

test("the relay's pass reads the unpublished index with a plain index scan, so entries of published rows are not re-read on every pass", async () => {
  const { pool } = await dbs.createWithOutbox();
  // Thousands of published rows and one waiting: the shape in which the planner, without
  // statistics, prefers a bitmap scan (which never marks stale index entries dead).
  await pool.query(
    `INSERT INTO outbox (id, subject, payload, created_at) SELECT gen_random_uuid(), $1, '\\x00', clock_timestamp() FROM generate_series(1, 3000)`,
    [`${SUBJECT_ROOT}.plan`],
  );
  await pool.query(`UPDATE outbox SET published_at = clock_timestamp()`);
  const { id } = (await pool.query(`SELECT gen_random_uuid()::text AS id`)).rows[0];
  await pool.query(`INSERT INTO outbox (id, subject, payload, created_at) VALUES ($1, $2, '\\x01', clock_timestamp())`, [id, `${SUBJECT_ROOT}.plan`]);

  // Record what the relay runs in its transaction, then plan its SELECT under the same settings.
  const recorded = recordingDb(pool);
  expect(await newRelay(recorded.db, nc).publishBatch()).toBe(1);
  const statements = recorded.statements.filter((s) => s.inTransaction && !/^(BEGIN|COMMIT|ROLLBACK)/.test(s.sql)).map((s) => s.sql);

  const select = statements.findIndex((q) => /^select .* from "outbox"/s.test(q));
  expect(select).toBeGreaterThanOrEqual(0);
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    for (const q of statements.slice(0, select)) await client.query(q);
    const plan = JSON.stringify((await client.query(`EXPLAIN (FORMAT JSON) ${statements[select]}`)).rows[0]);
    await client.query("ROLLBACK");
    expect(plan).toContain('"Index Name":"outbox_unpublished_idx"');
    expect(plan).not.toContain("Bitmap");
  } finally {
    client.release();
  }
});
