import { randomUUID } from "node:crypto";
import type { NatsConnection } from "nats";
import { Registry } from "prom-client";
import { pgDbOn, type PgDb } from "@pgw/kit/db";
import { attachEventMetrics, connectNats, enqueueEvent, ensureStream, OutboxRelay, startConsumer, startReconciler, STREAM_NAME, type RunningConsumer } from "@pgw/kit/events";
import { scrapedGauge, SCRAPE_READ_MS } from "@pgw/kit/runtime";
import { memoryLog, NATS_URL, TestDatabases, uniqueToken, waitFor } from "@pgw/kit/testing";

jest.setTimeout(30_000);

const RUN = uniqueToken();
const SUBJECT = `pgw.test.${RUN}.metrics`;
const DURABLE = `kit_${RUN}_metrics`;
const dbs = new TestDatabases("eventmetrics");
const log = memoryLog();
let nc: NatsConnection;
let db: PgDb;
let registry: Registry;
let consumer: RunningConsumer | undefined;

beforeAll(async () => {
  nc = await connectNats(NATS_URL, `kit-event-metrics-test-${RUN}`, log);
  await ensureStream(nc);
  db = pgDbOn((await dbs.createWithOutbox()).pool);
  registry = new Registry();
  attachEventMetrics(nc, db, registry);
});

afterAll(async () => {
  await consumer?.stop();
  const jsm = await nc.jetstreamManager();
  await jsm.consumers.delete(STREAM_NAME, DURABLE).catch(() => undefined);
  await jsm.streams.purge(STREAM_NAME, { filter: `pgw.test.${RUN}.>` }).catch(() => undefined);
  await nc.close();
  await dbs.dropAll();
});

/** The value of the sample `name{labels}` in the registry's exposition, or undefined. */
async function sample(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const found = metric?.values.find((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value));
  return found?.value;
}

const bytes = (s: string) => new TextEncoder().encode(s);

test("the outbox gauges show the rows waiting and the oldest's age, and fall to zero once the relay published them", async () => {
  await db.$transaction(async (tx) => {
    await enqueueEvent(tx, SUBJECT, bytes("one"));
    await enqueueEvent(tx, SUBJECT, bytes("two"));
  });
  await new Promise((r) => setTimeout(r, 1100)); // an age the gauge must show
  expect(await sample("outbox_pending_events")).toBe(2);
  expect(await sample("outbox_oldest_pending_age_seconds")).toBeGreaterThanOrEqual(1);

  const relay = new OutboxRelay({ db, nc, log });
  await relay.publishBatch();
  await relay.stop();
  expect(await sample("outbox_pending_events")).toBe(0);
  expect(await sample("outbox_oldest_pending_age_seconds")).toBe(0);
});

test("a consumer's durable shows its pending and redelivered messages under its name; a reconciler counts its passes and the events it applied", async () => {
  // The event fails until the gauge has shown it redelivered.
  const subject = `pgw.test.${RUN}.held`;
  await nc.jetstream().publish(subject, bytes("held"), { msgID: randomUUID() });
  let holding = true;
  const handled: string[] = [];
  const options = {
    nc,
    durable: DURABLE,
    filterSubject: subject,
    decode: (data: Uint8Array) => new TextDecoder().decode(data),
    db,
    log,
    retryDelayMs: 100,
    maxRetryDelayMs: 100,
    prepare: async (event: string) => {
      if (holding) throw new Error("fails until released");
      handled.push(event);
    },
  };
  consumer = await startConsumer(options);
  await waitFor(async () => ((await sample("jetstream_consumer_redelivered_messages", { consumer: DURABLE })) ?? 0) >= 1, 10_000, "a redelivery shown");
  expect(handled).toEqual([]);
  holding = false;
  await waitFor(() => handled.length === 1, 10_000, "the event handled");
  await waitFor(async () => (await sample("jetstream_consumer_redelivered_messages", { consumer: DURABLE })) === 0, 10_000, "no redelivery left");
  expect(await sample("jetstream_consumer_pending_messages", { consumer: DURABLE })).toBe(0);
  expect(await sample("jetstream_consumer_ack_pending_messages", { consumer: DURABLE })).toBe(0);

  const missed = randomUUID();
  const reconciler = startReconciler({
    ...options,
    everyMs: 60_000,
    settleMs: 0,
    source: async () => [{ eventId: missed, payload: bytes("lost on the way"), occurredAt: new Date(Date.now() - 1000).toISOString() }],
  });
  expect(await reconciler.pass()).toBe(1);
  await reconciler.stop();
  expect(await sample("reconciliation_passes_total", { consumer: DURABLE, result: "ok" })).toBe(1);
  expect(await sample("reconciliation_events_applied_total", { consumer: DURABLE })).toBe(1);
});

test("a scraped gauge keeps its last value when its read fails or takes longer than SCRAPE_READ_MS", async () => {
  const own = new Registry();
  const answers: (() => Promise<number>)[] = [async () => 7, async () => Promise.reject(new Error("down")), () => new Promise<number>(() => undefined)];
  scrapedGauge(own, "test_queue_length", "a queue", () => answers.shift()!());
  const read = async () => (await own.getSingleMetric("test_queue_length")!.get()).values[0]?.value;
  expect(await read()).toBe(7);
  expect(await read()).toBe(7);
  const started = Date.now();
  expect(await read()).toBe(7);
  expect(Date.now() - started).toBeLessThan(SCRAPE_READ_MS + 1000);
});
