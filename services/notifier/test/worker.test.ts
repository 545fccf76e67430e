/**
 * The delivery worker on the notifier's real database and real receivers. Claim gathering: an idle
 * worker claims a new delivery at once; deliveries that come due while it is busy share one claim
 * instead of one claim (a statement) each; a freed slot claims only when due deliveries may be
 * waiting for it. Isolation: dead endpoints keep only a couple of slots each once they have failed.
 */
import { createPgDb, loadDataKeys, parseDataKeys, pgDbOn } from "@pgw/kit/db";
import { type KitLog } from "@pgw/kit/events";
import { recordingDb } from "@pgw/kit/testing";
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { Registry } from "prom-client";
import { createHttpConnector } from "../src/connectors/webhook-http";
import type { DB } from "../src/generated/kysely/database";
import { DeliveryWorker } from "../src/jobs/delivery-worker";
import { deliveryMetrics, type DeliveryMetrics } from "../src/jobs/delivery-metrics";
import { applyShopWebhookUrl, DUE_CHANNEL, insertDelivery, rotateSecret, type NotifierDb } from "../src/store";
import { startHarness, waitFor, type Harness } from "./support/harness";
import { startReceiver, type Receiver } from "./support/receiver";

const keys = loadDataKeys({ LOCAL_MODE: "true" });
let h: Harness;
let pool: pg.Pool;
let receiver: Receiver;
beforeAll(async () => {
  h = await startHarness();
  await h.stopUnit(); // its own worker must not take the rows this test counts claims for
  pool = new pg.Pool({ connectionString: h.databaseUrl, max: 4 });
  receiver = await startReceiver();
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await pool?.end();
  await h?.stop();
});

/**
 * A pool of the worker's own (as another process's would be) whose claims are counted: the
 * statements that lock due rows, when they are sent and when they are answered.
 */
function claimCountingPool() {
  const counter = { claims: 0, settled: 0 };
  const workerPool = new pg.Pool({ connectionString: h.databaseUrl, max: 4 });
  workerPool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((config: string | pg.QueryConfig, ...rest: unknown[]) => {
      const text = typeof config === "string" ? config : config.text;
      if (!/for update skip locked/i.test(text)) return query(config, ...rest);
      counter.claims++;
      return (query(config, ...rest) as Promise<unknown>).finally(() => counter.settled++);
    }) as typeof client.query;
  });
  return { workerPool, counter };
}

/** How many times the worker's metrics counted `label` (an outcome of deliveries, or a result of attempts). */
async function counted(metric: DeliveryMetrics["deliveries"] | DeliveryMetrics["attempts"], label: Record<string, string>): Promise<number> {
  const [key, value] = Object.entries(label)[0];
  return (await metric.get()).values.find((v) => (v.labels as Record<string, unknown>)[key] === value)?.value ?? 0;
}

/** A worker on the test database whose claims and statements are counted; one shop with the receiver's URL, more through `shop`. */
async function countedWorker(options: { perShopConcurrency: number; gatherMs: number; concurrency?: number; timeoutMs?: number; schedule?: number[] }) {
  const db = pgDbOn<DB>(pool);
  // The worker's statements, on a pool of its own, recorded apart from the test's.
  const { workerPool, counter } = claimCountingPool();
  const recorded = recordingDb(workerPool);
  const metrics = deliveryMetrics(new Registry());
  /** What the worker logged at error level. */
  const errors: { obj: Record<string, unknown>; msg?: string }[] = [];
  const log: KitLog = { debug() {}, info() {}, warn() {}, error: (obj, msg) => void errors.push({ obj: obj as Record<string, unknown>, msg }) };
  const shops: string[] = [];
  /** A shop delivering to `to`; returns a function that makes one of its deliveries due. */
  const shop = async (to: Receiver) => {
    const shopId = randomUUID();
    shops.push(shopId);
    to.secrets.push(await rotateSecret(db, keys, shopId));
    await db.$transaction((tx) => applyShopWebhookUrl(tx, shopId, to.url, new Date()));
    return (n: number) =>
      db.$transaction((tx) => insertDelivery(tx, keys, { webhookId: `msg_${randomUUID()}`, shopId, operationId: randomUUID(), eventType: "operation.completed", payload: JSON.stringify({ n }) }));
  };
  const connector = createHttpConnector({ localMode: true });
  const worker = new DeliveryWorker({
    db: recorded.db as NotifierDb,
    keys,
    log,
    metrics,
    post: connector.post,
    schedule: options.schedule ?? [0],
    concurrency: options.concurrency ?? 16,
    perShopConcurrency: options.perShopConcurrency,
    pollMs: 60_000, // no poll during a test: every claim comes from a wake-up or a freed slot
    timeoutMs: options.timeoutMs ?? 2000,
    leaseMs: 60_000,
    gatherMs: options.gatherMs,
  });
  return {
    db,
    worker,
    counter,
    /** The worker's statements and transactions so far, counted as the kit's `db_statements_total` and `db_transactions_total` count them (a statement alone is a transaction). */
    work: () => ({ statements: recorded.statements.length, transactions: recorded.transactions() + recorded.outside().length }),
    metrics,
    errors,
    /** Resolves once the worker's first claim (it finds nothing) has run: the worker is idle. */
    idle: () => waitFor(() => counter.claims >= 1 && counter.settled === counter.claims, 5000, "the worker's first claim"),
    /**
     * Resolves once `n` deliveries have been recorded delivered and no claim is under way: each
     * attempt's end (where a freed slot would claim again) has run by then.
     */
    delivered: (n: number) => waitFor(async () => (await counted(metrics.deliveries, { outcome: "delivered" })) >= n && counter.settled === counter.claims, 5000, `${n} deliveries recorded`),
    due: await shop(receiver),
    shop,
    /** The shops made so far, the first one `due`'s. */
    shops,
    /**
     * Stops the worker; first, unless `drain` is false, waits until every delivery of its shops is
     * settled: a stop interrupts attempts whose answer has not been read yet, and the next test's
     * worker would send those again (at least once), adding to the shared receiver's count.
     */
    async stop(drain = true) {
      if (drain) {
        const unsettled = async () =>
          Number((await pool.query(`SELECT count(*) AS n FROM deliveries WHERE shop_id = ANY($1::uuid[]) AND status = 'pending'`, [shops])).rows[0].n);
        await waitFor(async () => (await unsettled()) === 0, 5000, "the worker's deliveries to settle");
      }
      await worker.stop();
      connector.close();
      await workerPool.end();
    },
  };
}

test("an idle worker claims at once; deliveries that come due while it is busy share one claim", async () => {
  const { worker, counter, due, idle, delivered, stop } = await countedWorker({ perShopConcurrency: 16, gatherMs: 1000 });
  const successes = receiver.successes().length;
  try {
    worker.start();
    await idle();
    counter.claims = counter.settled = 0;

    await due(0);
    const started = Date.now();
    worker.wake(); // what the insert's commit does in the unit (see the next test)
    await waitFor(() => receiver.successes().length === successes + 1, 5000, "the first delivery");
    expect(Date.now() - started).toBeLessThan(700); // idle: no gathering delay (1 s), with room for a loaded machine
    await delivered(1);
    expect(counter.claims).toBe(1);

    // Busy now (its last claim found work): ten deliveries due one by one, each with its wake-up.
    for (let n = 1; n <= 10; n++) {
      await due(n);
      worker.wake();
    }
    await waitFor(() => receiver.successes().length === successes + 11, 5000, "the ten");
    await delivered(11);
    expect(counter.claims).toBe(2); // one claim took all ten, and none followed
  } finally {
    await stop();
  }
});

test("a delivered webhook costs the worker two statements: its claim (which brings the shop's secrets) and the attempt's record", async () => {
  const { worker, work, due, idle, delivered, stop } = await countedWorker({ perShopConcurrency: 16, gatherMs: 0 });
  try {
    worker.start();
    await idle();
    const before = work();
    await due(0);
    worker.wake();
    await delivered(1);
    const after = work();
    // The claim and the record, one statement each.
    expect({ statements: after.statements - before.statements, transactions: after.transactions - before.transactions }).toEqual({ statements: 2, transactions: 2 });
  } finally {
    await stop();
  }
});

test("after a rotation on another replica, this worker's next attempt signs with the new secret too", async () => {
  const { worker, due, shops, idle, delivered, stop } = await countedWorker({ perShopConcurrency: 16, gatherMs: 0 });
  const otherReplica = createPgDb<DB>(h.databaseUrl, 1);
  try {
    worker.start();
    await idle();
    await due(1);
    worker.wake();
    await delivered(1);
    const [before] = receiver.successes().slice(-1);
    expect(before.json.n).toBe(1);
    expect(before.verifiedWith).toHaveLength(1);

    const rotated = await rotateSecret(otherReplica, keys, shops[0]);
    receiver.secrets.push(rotated);
    await due(2);
    worker.wake();
    await delivered(2);
    const [after] = receiver.successes().slice(-1);
    expect(after.json.n).toBe(2);
    // Newest first, and the one it replaces for the overlap.
    expect(after.signature.split(" ")).toHaveLength(2);
    expect(after.verifiedWith.sort()).toEqual([rotated, ...before.verifiedWith].sort());
  } finally {
    await stop();
    await otherReplica.end();
  }
});

test("a delivery made due in a transaction of the unit's client wakes the worker at its commit, with no other wake-up or poll", async () => {
  const { db, worker, due, idle, stop } = await countedWorker({ perShopConcurrency: 16, gatherMs: 0 });
  db.onCommit(DUE_CHANNEL, () => worker.wake()); // as main.ts wires it
  const successes = receiver.successes().length;
  try {
    worker.start();
    await idle(); // and its poll is a minute away
    const started = Date.now();
    await due(7);
    await waitFor(() => receiver.successes().length === successes + 1, 5000, "the delivery");
    expect(Date.now() - started).toBeLessThan(700);
    expect(receiver.successes().at(-1)!.json.n).toBe(7);
  } finally {
    await stop();
  }
});

/** Three deliveries due at once for an idle worker with one wake-up; the claims it took for them (no poll runs). */
async function claimsForThree(perShopConcurrency: number): Promise<number> {
  const { worker, counter, due, idle, delivered, stop } = await countedWorker({ perShopConcurrency, gatherMs: 0 });
  const successes = receiver.successes().length;
  try {
    worker.start();
    await idle();
    counter.claims = counter.settled = 0;
    for (let n = 0; n < 3; n++) await due(n);
    worker.wake();
    await waitFor(() => receiver.successes().length === successes + 3, 3000, "the three");
    expect(receiver.successes().slice(-3).map((r) => r.json.n).sort()).toEqual([0, 1, 2]);
    await delivered(3); // every freed slot has had its chance to claim
    return counter.claims;
  } finally {
    await stop();
  }
}

test("a claim that took every due delivery is not followed by an empty one when they finish", async () => {
  expect(await claimsForThree(16)).toBe(1);
});

test("a delivery its shop's cap passed over is claimed as soon as that shop's slot frees", async () => {
  // One at a time (the cap): each claimed when the one before it finished, within waitFor's 3 s.
  expect(await claimsForThree(1)).toBe(3);
});

test("dead endpoints keep a couple of slots each once they have failed: another shop's delivery goes out at once", async () => {
  // Six slots, up to four per shop; two shops whose endpoint never answers, six deliveries each,
  // retried at once. Their first attempts fill every slot until the 1 s timeout; from then on each
  // keeps two slots (four in all), so two stay free for shops whose endpoints answer.
  const dead = await startReceiver({ answer: () => "hang" });
  const { worker, due, shop, metrics, stop } = await countedWorker({ perShopConcurrency: 4, gatherMs: 0, concurrency: 6, timeoutMs: 1000, schedule: Array(20).fill(0) });
  try {
    for (const dueDead of [await shop(dead), await shop(dead)]) for (let n = 0; n < 6; n++) await dueDead(n);
    worker.start();
    await waitFor(() => dead.verified.length >= 6, 3000, "the first attempts to the dead endpoints");
    // Every first attempt ended by its timeout and was recorded; their slots went to the retries.
    await waitFor(async () => (await counted(metrics.attempts, { result: "no_response" })) >= 6, 5000, "the first attempts' timeouts");
    await waitFor(() => dead.verified.length >= 10, 3000, "the dead shops' retries");

    const successes = receiver.successes().length;
    const started = Date.now();
    await due(100);
    worker.wake();
    await waitFor(() => receiver.successes().length === successes + 1, 3000, "the healthy shop's delivery");
    // That claim came after the retries': still two attempts in flight per dead shop, no more.
    expect(dead.held()).toBeLessThanOrEqual(4);
    expect(Date.now() - started).toBeLessThan(400); // without the cap it waits for a dead attempt's timeout
  } finally {
    await stop(false); // the dead endpoints' retries never settle
    await dead.close();
  }
}, 20_000);

test("a stop lets an attempt in flight finish and records it, instead of dropping it to be sent again", async () => {
  const slow = await startReceiver({ answer: () => ({ status: 200, delayMs: 800 }) });
  const { worker, shop, stop } = await countedWorker({ perShopConcurrency: 4, gatherMs: 0, timeoutMs: 3000 });
  try {
    await (await shop(slow))(1);
    worker.start();
    await waitFor(() => slow.verified.length === 1, 3000, "the attempt to reach the receiver");
    await stop(false); // the receiver has not answered yet
    expect(slow.successes()).toHaveLength(1);
    const { rows } = await pool.query(`SELECT status, attempts FROM deliveries WHERE webhook_id = $1`, [slow.verified[0].webhookId]);
    expect(rows).toEqual([{ status: "delivered", attempts: 1 }]);
  } finally {
    await slow.close();
  }
});

test("a body that cannot be opened fails its own delivery only; the others go out", async () => {
  const { worker, due, errors, stop } = await countedWorker({ perShopConcurrency: 16, gatherMs: 0 });
  const successes = receiver.successes().length;
  try {
    await due(1);
    // Sealed under a key this notifier does not hold (a key removed too early, or a copied row).
    const foreign = parseDataKeys(`gone:${randomBytes(32).toString("base64")}`, undefined).seal(JSON.stringify({ n: 2 }));
    const { rows } = await pool.query(`UPDATE deliveries SET payload = $1 WHERE payload = (SELECT payload FROM deliveries ORDER BY created_at DESC LIMIT 1) RETURNING id`, [foreign]);
    await due(3);
    worker.start();
    await waitFor(() => receiver.successes().length === successes + 1, 3000, "the healthy delivery");
    // The worker got to the other one, and gave up on it without sending anything.
    await waitFor(() => errors.some((e) => e.obj.delivery_id === rows[0].id), 3000, "the unopenable delivery's attempt to fail");
    expect(receiver.successes().slice(successes).map((r) => r.json.n)).toEqual([3]);
    // Still leased: tried again after its lease, never sent unsigned or garbled.
    const stuck = await pool.query(`SELECT status, attempts, claim_id IS NOT NULL AS leased FROM deliveries WHERE id = $1`, [rows[0].id]);
    expect(stuck.rows).toEqual([{ status: "pending", attempts: 0, leased: true }]);
    await pool.query(`DELETE FROM deliveries WHERE id = $1`, [rows[0].id]);
  } finally {
    await stop();
  }
});
