import { sql } from "kysely";
import { randomUUID } from "node:crypto";
import { connect, type NatsConnection } from "nats";
import { startReconciler, type EventSource, type ReconcilerOptions } from "@pgw/kit/events";
import { memoryLog, NATS_URL, recordingDb, TestDatabases } from "@pgw/kit/testing";
import { pgDbOn, type PgDb } from "@pgw/kit/db";

const dbs = new TestDatabases("reconciler");
let nc: NatsConnection;
beforeAll(async () => {
  nc = await connect({ servers: NATS_URL });
});
afterAll(async () => {
  await nc.close();
  await dbs.dropAll();
});

/** A producer's record of events: what operations' ListStatusEvents answers, paged by time. */
function record(events: RecordedEvent[]): EventSource {
  return async (since, limit) => events.filter((e) => e.occurredAt > since).slice(0, limit);
}

type RecordedEvent = { eventId: string; payload: Uint8Array; occurredAt: string };

/**
 * A reconciler under consumer name `durable` replaying `events` (text payloads) into the table
 * `effects`; passes run when a test asks (`pass()`).
 */
function effectsReconciler(db: PgDb, durable: string, events: RecordedEvent[], extra: Partial<ReconcilerOptions<string>> = {}) {
  return startReconciler<string>({
    nc,
    db,
    log: memoryLog(),
    durable,
    filterSubject: `pgw.test.${durable}`,
    decode: (data) => Buffer.from(data).toString("utf8"),
    handle: async (tx, body, meta) => void (await sql`INSERT INTO effects VALUES (${meta.eventId}::uuid, ${body})`.execute(tx)),
    source: record(events),
    everyMs: 3_600_000,
    ...extra,
  });
}

test("replays events the consumer never handled, once, through the same handler and name; leaves fresh ones to the consumer", async () => {
  const { pool } = await dbs.createWithOutbox(`CREATE TABLE effects (event_id uuid, body text);`);
  const db = pgDbOn(pool);
  const log = memoryLog();
  const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
  const seen = randomUUID();
  const lost = randomUUID();
  const ignored = randomUUID();
  const fresh = randomUUID();
  const events = [
    { eventId: seen, payload: Buffer.from("seen"), occurredAt: at(600_000) },
    { eventId: lost, payload: Buffer.from("lost"), occurredAt: at(500_000) },
    { eventId: ignored, payload: Buffer.from("ignored"), occurredAt: at(400_000) },
    { eventId: fresh, payload: Buffer.from("fresh"), occurredAt: at(1_000) },
  ];
  // The live consumer had handled `seen` already.
  await pool.query(`INSERT INTO processed_events (consumer, event_id) VALUES ('orders', $1)`, [seen]);

  const reconciler = effectsReconciler(db, "orders", events, { log, relevant: (body) => body !== "ignored", settleMs: 60_000 });
  try {
    expect(await reconciler.pass()).toBe(1);
    expect(await reconciler.pass()).toBe(0);
    const { rows } = await pool.query(`SELECT event_id::text, body FROM effects ORDER BY body`);
    expect(rows).toEqual([{ event_id: lost, body: "lost" }]);
    expect(log.lines.filter((l) => l.level === "warn").length).toBe(1);
  } finally {
    await reconciler.stop();
  }
});

test("checks the processedAs name when the consumer records under one", async () => {
  const { pool } = await dbs.createWithOutbox(`CREATE TABLE effects (event_id uuid, body text);`);
  const at = new Date(Date.now() - 600_000).toISOString();
  const seen = randomUUID();
  const lost = randomUUID();
  await pool.query(`INSERT INTO processed_events (consumer, event_id) VALUES ('shared', $1)`, [seen]);
  const events = [
    { eventId: seen, payload: Buffer.from("seen"), occurredAt: at },
    { eventId: lost, payload: Buffer.from("lost"), occurredAt: at },
  ];
  const reconciler = effectsReconciler(pgDbOn(pool), "orders-a", events, { processedAs: "shared" });
  try {
    expect(await reconciler.pass()).toBe(1);
    expect((await pool.query(`SELECT body FROM effects`)).rows).toEqual([{ body: "lost" }]);
    expect((await pool.query(`SELECT consumer FROM processed_events WHERE event_id = $1`, [lost])).rows).toEqual([{ consumer: "shared" }]);
  } finally {
    await reconciler.stop();
  }
});

test("a pass over events already handled runs no transaction for them, across pages", async () => {
  const { pool } = await dbs.createWithOutbox(`CREATE TABLE effects (event_id uuid, body text);`);
  const { db, transactions } = recordingDb(pool);
  const start = Date.now() - 3_600_000;
  const events = Array.from({ length: 1201 }, (_, i) => ({ eventId: randomUUID(), payload: Buffer.from(`e${i}`), occurredAt: new Date(start + i * 1000).toISOString() }));
  const lost = events[1100];
  await pool.query(`INSERT INTO processed_events (consumer, event_id) SELECT 'bulk', unnest($1::uuid[])`, [events.filter((e) => e !== lost).map((e) => e.eventId)]);
  const reconciler = effectsReconciler(db, "bulk", events);
  try {
    expect(await reconciler.pass()).toBe(1);
    expect(transactions()).toBe(1); // the lost event's, on the third page
    const { rows } = await pool.query(`SELECT event_id::text, body FROM effects`);
    expect(rows).toEqual([{ event_id: lost.eventId, body: "e1100" }]);
  } finally {
    await reconciler.stop();
  }
});

test("events sharing the millisecond where a page ends are not skipped", async () => {
  const { pool } = await dbs.createWithOutbox(`CREATE TABLE effects (event_id uuid, body text);`);
  const db = pgDbOn(pool);
  const start = Date.now() - 3_600_000;
  // 499 events a second apart, then three in one millisecond: the first page (500) ends inside it.
  const times = [...Array.from({ length: 499 }, (_, i) => start + i * 1000), start + 600_000, start + 600_000, start + 600_000];
  const events = times.map((t, i) => ({ eventId: randomUUID(), payload: Buffer.from(`e${i}`), occurredAt: new Date(t).toISOString() }));
  const reconciler = effectsReconciler(db, "ties", events);
  try {
    expect(await reconciler.pass()).toBe(502);
    const { rows } = await pool.query(`SELECT count(DISTINCT event_id)::int AS n FROM effects`);
    expect(rows[0].n).toBe(502);
  } finally {
    await reconciler.stop();
  }
});

test("after a complete pass, the next one reads only what occurred since, overlapping by the settle time", async () => {
  const { pool } = await dbs.createWithOutbox(`CREATE TABLE effects (event_id uuid, body text);`);
  const db = pgDbOn(pool);
  const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
  const events = [
    { eventId: randomUUID(), payload: Buffer.from("old"), occurredAt: at(20 * 3_600_000) },
    { eventId: randomUUID(), payload: Buffer.from("recent"), occurredAt: at(600_000) },
  ];
  const asked: string[] = [];
  const source: EventSource = async (since, limit) => {
    asked.push(since);
    return record(events)(since, limit);
  };
  const reconciler = effectsReconciler(db, "window", events, { source, settleMs: 60_000 });
  try {
    expect(await reconciler.pass()).toBe(2);
    const firstUntil = Date.now() - 60_000;
    // A lost event that became visible only after the first pass (its transaction committed late)
    // although it occurred before that pass's cut-off: the overlap finds it.
    events.push({ eventId: randomUUID(), payload: Buffer.from("late"), occurredAt: new Date(firstUntil - 30_000).toISOString() });
    expect(await reconciler.pass()).toBe(1);
    expect(Date.parse(asked[0])).toBeLessThan(Date.now() - 23 * 3_600_000); // the first pass: 24 h back
    const second = Date.parse(asked[asked.length - 1]);
    expect(second).toBeGreaterThan(firstUntil - 60_000 - 1_000); // not 24 h back again ...
    expect(second).toBeLessThanOrEqual(firstUntil - 60_000 + 50); // ... but overlapping by the settle time
    const { rows } = await pool.query(`SELECT body FROM effects ORDER BY body`);
    expect(rows.map((r) => r.body)).toEqual(["late", "old", "recent"]);
  } finally {
    await reconciler.stop();
  }
});

test("a failed pass does not move the window: the next pass looks as far back as the failed one", async () => {
  const { pool } = await dbs.createWithOutbox(`CREATE TABLE effects (event_id uuid, body text);`);
  const db = pgDbOn(pool);
  const events = [{ eventId: randomUUID(), payload: Buffer.from("flaky"), occurredAt: new Date(Date.now() - 3_600_000).toISOString() }];
  const asked: string[] = [];
  let failures = 1;
  const source: EventSource = async (since, limit) => {
    asked.push(since);
    if (failures-- > 0) throw new Error("operations unavailable");
    return record(events)(since, limit);
  };
  const reconciler = effectsReconciler(db, "failing", events, { source });
  try {
    await expect(reconciler.pass()).rejects.toThrow("operations unavailable");
    expect(await reconciler.pass()).toBe(1);
    expect(Date.parse(asked[1])).toBeLessThan(Date.now() - 23 * 3_600_000);
  } finally {
    await reconciler.stop();
  }
});
