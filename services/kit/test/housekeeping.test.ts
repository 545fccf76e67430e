import { randomUUID } from "node:crypto";
import { startHousekeeping } from "@pgw/kit/events";
import { pgDbOn } from "@pgw/kit/db";
import { memoryLog, TestDatabases } from "@pgw/kit/testing";

const dbs = new TestDatabases("housekeeping");
afterAll(() => dbs.dropAll());

const DAY = 24 * 60 * 60 * 1000;

test("deletes published outbox rows and processed events older than the retention, in batches; keeps the rest and every unpublished row", async () => {
  const { pool } = await dbs.createWithOutbox();
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  const outbox = async (label: string, createdAgo: number, publishedAgo: number | null) => {
    const id = randomUUID();
    await pool.query(`INSERT INTO outbox (id, subject, payload, created_at, published_at) VALUES ($1, $2, '\\x00', $3, $4)`, [id, label, ago(createdAgo), publishedAgo === null ? null : ago(publishedAgo)]);
    return id;
  };
  for (let i = 0; i < 5; i++) await outbox("old published", 10 * DAY, 10 * DAY);
  const recent = await outbox("recent published", 2 * DAY, 2 * DAY);
  const stuck = await outbox("old but never published", 10 * DAY, null);
  for (let i = 0; i < 3; i++) await pool.query(`INSERT INTO processed_events (consumer, event_id, processed_at) VALUES ('c', $1, $2)`, [randomUUID(), ago(9 * DAY)]);
  const fresh = randomUUID();
  await pool.query(`INSERT INTO processed_events (consumer, event_id, processed_at) VALUES ('c', $1, $2)`, [fresh, ago(60_000)]);

  const log = memoryLog();
  const housekeeping = startHousekeeping({ db: pgDbOn(pool), log, keepMs: 8 * DAY, batchSize: 2 });
  try {
    expect(await housekeeping.pass()).toEqual({ outbox: 5, processedEvents: 3 });
    const left = await pool.query(`SELECT id::text FROM outbox ORDER BY subject`);
    expect(left.rows.map((r) => r.id)).toEqual([stuck, recent]);
    const kept = await pool.query(`SELECT event_id::text FROM processed_events`);
    expect(kept.rows.map((r) => r.event_id)).toEqual([fresh]);
    expect(await housekeeping.pass()).toEqual({ outbox: 0, processedEvents: 0 });
    expect(log.lines.filter((l) => l.msg === "housekeeping: old event records deleted")).toHaveLength(1);
  } finally {
    await housekeeping.stop();
  }
});
