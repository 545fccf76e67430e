/**
 * The delivery worker's claim gathering, on the notifier's real database and a real receiver: an
 * idle worker claims a new delivery at once; deliveries that come due while it is busy share one
 * claim instead of one claim (a transaction) each.
 */
import { createLogger, pgDbOn, type DbClient } from "@pgw/kit";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { Registry } from "prom-client";
import { createHttpConnector } from "../src/connectors/webhook-http";
import { deliveryMetrics } from "../src/metrics";
import { applyShopWebhookUrl, insertDelivery, rotateSecret } from "../src/store";
import { DeliveryWorker } from "../src/worker";
import { sleep, startHarness, waitFor, type Harness } from "./support/harness";
import { startReceiver, type Receiver } from "./support/receiver";

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

test("an idle worker claims at once; deliveries that come due while it is busy share one claim", async () => {
  const db = pgDbOn(pool);
  let claims = 0;
  const counted: DbClient = {
    $executeRawUnsafe: (query, ...values) => db.$executeRawUnsafe(query, ...values),
    $queryRawUnsafe: (query, ...values) => db.$queryRawUnsafe(query, ...values),
    $transaction: (fn, options) => (claims++, db.$transaction(fn, options)),
  };
  const shopId = randomUUID();
  receiver.secrets = [await rotateSecret(db, shopId)];
  await db.$transaction((tx) => applyShopWebhookUrl(tx, shopId, receiver.url, new Date()));
  const connector = createHttpConnector({ localMode: true });
  const worker = new DeliveryWorker({
    db: counted,
    log: createLogger("notifier-test", "silent"),
    metrics: deliveryMetrics(new Registry()),
    post: connector.post,
    schedule: [0],
    concurrency: 16,
    perShopConcurrency: 16,
    pollMs: 60_000,
    timeoutMs: 2000,
    leaseMs: 60_000,
    gatherMs: 300,
    sweepMs: 600_000,
  });
  const due = (n: number) =>
    db.$transaction((tx) => insertDelivery(tx, { webhookId: `msg_${randomUUID()}`, shopId, operationId: randomUUID(), eventType: "operation.completed", payload: JSON.stringify({ n }) }));
  try {
    worker.start();
    await sleep(200); // the first (empty) claim has run: idle
    claims = 0;

    await due(0);
    const started = Date.now();
    worker.wake(); // what the NOTIFY of the insert does
    await waitFor(() => receiver.successes().length === 1, 5000, "the first delivery");
    expect(Date.now() - started).toBeLessThan(250); // idle: no gathering delay
    expect(claims).toBe(1);

    // Busy now (its last claim found work): ten deliveries due one by one, each with its wake-up.
    for (let n = 1; n <= 10; n++) {
      await due(n);
      worker.wake();
    }
    await waitFor(() => receiver.successes().length === 11, 5000, "the ten");
    expect(claims).toBe(2); // one claim took all ten
  } finally {
    await worker.stop();
    connector.close();
  }
});
