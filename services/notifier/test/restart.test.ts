/** Deliveries live in the database: a notifier stopped mid-retry continues after a restart. */
import { sql } from "kysely";
import { randomUUID } from "node:crypto";
import { createPgDb } from "@pgw/kit/db";
import type { DB } from "../src/generated/kysely/database";
import { operation, publishShopChanged, publishStatus, startHarness, waitFor, type Harness } from "./support/harness";
import { startReceiver, type Receiver } from "./support/receiver";

let h: Harness;
let receiver: Receiver;

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_RETRY_SCHEDULE_MS: "0,1500,100" });
  receiver = await startReceiver();
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

it("resumes the retry schedule and the event stream after a restart on the same database", async () => {
  const shopId = randomUUID();
  receiver.secrets = [(await h.client.rotateSecret({ shopId })).secret];
  let up = false;
  receiver.answer = () => (up ? { status: 200 } : { status: 500 });
  await publishShopChanged(h.nc, shopId, receiver.url);
  const eventId = await publishStatus(h.nc, operation(shopId, "completed"), "pending");
  await waitFor(async () => (await h.client.listDeliveries({ shopId, limit: 10 })).deliveries[0]?.attempts === 1, 10_000, "the first failed attempt");

  await h.stopUnit(); // mid-retry: the second attempt is due in ~1.5 s
  up = true;
  const whileDown = await publishStatus(h.nc, operation(shopId, "expired"), "pending");
  // The retry falls due while the notifier is down (the database's clock says so), and nobody sends it.
  const db = createPgDb<DB>(h.databaseUrl, 1);
  try {
    await waitFor(
      async () => (await db.selectFrom("deliveries").select("id").where("status", "=", "pending").where("nextAttemptAt", "<=", sql<Date>`now()`).execute()).length === 1,
      10_000,
      "the retry to fall due",
    );
  } finally {
    await db.end();
  }
  expect(receiver.successes()).toHaveLength(0);
  await h.startUnit();

  await waitFor(() => receiver.successes().length === 2, 10_000, "both deliveries after the restart");
  // Both recorded as delivered: nothing more of either goes out.
  const deliveries = await waitFor(async () => {
    const list = (await h.client.listDeliveries({ shopId, limit: 10 })).deliveries;
    return list.length === 2 && list.every((d) => d.status === "delivered") ? list : null;
  }, 10_000, "both deliveries recorded");
  expect(receiver.successes().map((r) => r.webhookId).sort()).toEqual([`msg_${eventId}`, `msg_${whileDown}`].sort());
  expect(receiver.verified.filter((r) => r.webhookId === `msg_${eventId}`).map((r) => r.answered)).toEqual([500, 200]);
  expect(deliveries.map((d) => [d.webhookId, d.status, d.attempts]).sort()).toEqual(
    [
      [`msg_${eventId}`, "delivered", 2],
      [`msg_${whileDown}`, "delivered", 1],
    ].sort(),
  );
});
