/**
 * The real notifier unit: events published to JetStream become signed webhooks at a real HTTP
 * receiver that verifies each one with the standardwebhooks library. Retry delays are scaled down
 * through WEBHOOK_RETRY_SCHEDULE_MS.
 */
import { create } from "@bufbuild/protobuf";
import { operationStateJson, stableUuid, verifyReceiptLink, type Evidence } from "@pgw/contracts";
import { loadDataKeys } from "@pgw/kit/db";
import { scopedDurable, STREAM_NAME } from "@pgw/kit/events";
import { ExternalConfirmationSchema } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { Code, ConnectError } from "@connectrpc/connect";
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { STATUS_CONSUMERS, STATUS_PROCESSED_AS } from "../src/events";
import { startFakeReceipts } from "./support/fake-receipts";
import { operation, publishShopChanged, publishStatus, startHarness, waitFor, type Harness } from "./support/harness";
import { startReceiver, type Receiver } from "./support/receiver";

const SCHEDULE = "0,100,100,100"; // 4 attempts
let h: Harness;
let receipts: Awaited<ReturnType<typeof startFakeReceipts>>;
const evidence = new Map<string, Evidence>();
const receivers: Receiver[] = [];

beforeAll(async () => {
  receipts = await startFakeReceipts(evidence);
  h = await startHarness({ WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE, WEBHOOK_TIMEOUT_MS: "1500", RECEIPTS_URL: receipts.url, WEBHOOK_PER_SHOP_CONCURRENCY: "2" });
}, 60_000);
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await h?.stop();
  await receipts?.close();
});

/** A new shop with a receiver at its URL and a secret obtained by rotation (the merchant's way). */
async function shopWithReceiver(answer?: Receiver["answer"]) {
  const shopId = randomUUID();
  const receiver = await startReceiver({ answer });
  receivers.push(receiver);
  receiver.secrets = [(await h.client.rotateSecret({ shopId })).secret];
  await publishShopChanged(h.nc, shopId, receiver.url);
  return { shopId, receiver };
}

/** Messages JetStream has sent the notifier's status consumers so far (redeliveries included). */
async function statusMessagesSent(): Promise<number> {
  const jsm = await h.nc.jetstreamManager();
  let sent = 0;
  for (const { durable } of STATUS_CONSUMERS) sent += (await jsm.consumers.info(STREAM_NAME, scopedDurable(h.nc, durable))).delivered.consumer_seq;
  return sent;
}

/**
 * Both status consumers have been sent everything their filters let through and have acknowledged
 * it (handled, or found handled before): no status event published so far is still on its way.
 */
async function statusConsumersCaughtUp(): Promise<boolean> {
  const jsm = await h.nc.jetstreamManager();
  for (const { durable } of STATUS_CONSUMERS) {
    const info = await jsm.consumers.info(STREAM_NAME, scopedDurable(h.nc, durable));
    if (info.num_pending > 0 || info.num_ack_pending > 0) return false;
  }
  return true;
}

/** The shop's deliveries once there are `n` and none is pending any more (each delivered, failed or disabled: nothing more goes out). */
const settledDeliveries = (shopId: string, n: number) =>
  waitFor(async () => {
    const list = await deliveriesOf(shopId);
    return list.length >= n && list.every((d) => d.status !== "pending") ? list : null;
  }, 10_000, `${n} settled deliveries`);

/** Resolves once the notifier has handled the event (its processed_events record). */
const handled = (eventId: string) =>
  waitFor(async () => (await h.unit.db.selectFrom("processedEvents").select("eventId").where("eventId", "=", eventId).executeTakeFirst()) !== undefined, 10_000, `event ${eventId} handled`);

const codeOf = (p: Promise<unknown>) => p.then(() => "ok", (e) => Code[ConnectError.from(e).code]);
const deliveriesOf = async (shopId: string) => (await h.client.listDeliveries({ shopId, limit: 100 })).deliveries;

describe("webhook content and signing", () => {
  it("POSTs {id, type, created_at, data} with Standard Webhooks headers that the library verifies", async () => {
    const { shopId, receiver } = await shopWithReceiver();
    const op = operation(shopId, "awaiting_confirmation", { externalConfirmation: create(ExternalConfirmationSchema, { required: true, methods: ["receipt"] }) });
    const occurredAt = "2026-11-22T10:00:00.123Z";
    const eventId = await publishStatus(h.nc, op, "creating", { occurredAt });

    const [got] = await waitFor(() => (receiver.verified.length ? receiver.verified : null), 10_000, "the webhook");
    expect(got.webhookId).toBe(`msg_${eventId}`);
    expect(got.contentType).toBe("application/json");
    expect(Math.abs(Number(got.timestamp) - Date.now() / 1000)).toBeLessThan(10);
    expect(got.signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(got.json).toEqual({ id: `msg_${eventId}`, type: "operation.awaiting_confirmation", created_at: occurredAt, data: operationStateJson(op, null) });
    expect(got.json.data).toMatchObject({ operation_id: op.operationId, status: "awaiting_confirmation", receipts: [], receipt_evidence_status: "not_ready", external_confirmation: { required: true, methods: ["receipt"] } });
    for (const internal of ["shop_id", "shopId", "merchant_operation_id", "created_at", "updated_at"]) expect(got.json.data).not.toHaveProperty(internal);
    // The exact bytes received are the bytes stored and signed.
    const [delivery] = await waitFor(async () => ((await deliveriesOf(shopId))[0]?.status === "delivered" ? deliveriesOf(shopId) : null));
    expect(delivery).toMatchObject({ webhookId: `msg_${eventId}`, eventType: "operation.awaiting_confirmation", operationId: op.operationId, attempts: 1 });
    expect(delivery.attemptLog).toEqual([expect.objectContaining({ number: 1, statusCode: 204, error: "" })]);
    // Stored sealed under the data key (a body holds the operation's card number), and the signing
    // secret too: they open to the bytes received and the secret they verified with.
    const keys = loadDataKeys({ LOCAL_MODE: "true" });
    const stored = await h.unit.db.selectFrom("deliveries").select("payload").where("webhookId", "=", got.webhookId).executeTakeFirstOrThrow();
    expect(stored.payload).not.toContain(op.number);
    expect(keys.open(stored.payload)).toBe(got.body);
    const secrets = await h.unit.db.selectFrom("webhookSecrets").select("secret").where("shopId", "=", shopId).execute();
    expect(secrets.map((s) => keys.open(s.secret))).toEqual(receiver.secrets);
  });

  it("opens the number the event carries sealed, with no call to operations (nothing listens at its address)", async () => {
    const { shopId, receiver } = await shopWithReceiver();
    const card = "2200700087654321";
    const op = operation(shopId, "declined", { number: undefined });
    await publishStatus(h.nc, op, "pending", { sealedNumber: loadDataKeys({ LOCAL_MODE: "true" }).seal(card) });
    const [got] = await waitFor(() => (receiver.verified.length ? receiver.verified : null), 10_000, "the webhook");
    expect(got.json.data).toEqual(operationStateJson({ ...op, number: card }, null));
    expect(got.json.data.number).toBe(card);
  });

  it("puts the receipt evidence of a completed operation in data, its links renewed at the attempt, and `unavailable` when receipts cannot answer", async () => {
    const { shopId, receiver } = await shopWithReceiver();
    const withEvidence = operation(shopId, "completed");
    const item = { id: randomUUID(), amount: "1500.00", completedAt: "2026-11-22T10:00:00.000Z", receiptUrl: "https://gw.example/v1/receipts/x/file?expires=1&signature=s" };
    evidence.set(withEvidence.operationId, { status: "complete", items: [item] });
    const without = operation(shopId, "completed");
    await publishStatus(h.nc, withEvidence, "pending");
    await publishStatus(h.nc, without, "pending");
    await waitFor(() => receiver.verified.length >= 2, 10_000, "two webhooks");
    const byOp = new Map(receiver.verified.map((r) => [r.json.data.operation_id, r.json.data]));
    expect(byOp.get(withEvidence.operationId)).toMatchObject({
      status: "completed",
      actual_amount: "1500.00",
      receipt_evidence_status: "complete",
      receipts: [{ id: item.id, amount: 1500, completed_at: item.completedAt, receipt_url: expect.stringMatching(/^https:\/\/gw\.example\/v1\/receipts\/x\/file\?expires=\d+&signature=[0-9a-f]{64}$/) }],
    });
    // The stored link had expired in 1970; the one sent is valid from the attempt on.
    const sent = new URL(byOp.get(withEvidence.operationId).receipts[0].receipt_url);
    expect(verifyReceiptLink("local-dev-receipt-url-secret", item.id, Number(sent.searchParams.get("expires")), sent.searchParams.get("signature")!, new Date())).toBeNull();
    expect(byOp.get(without.operationId)).toMatchObject({ status: "completed", receipt_evidence_status: "unavailable", receipts: [] });
  });

  it("builds a completion's evidence from the provider legs its event carries, by receipts' rule and links, without asking receipts", async () => {
    const { shopId, receiver } = await shopWithReceiver();
    const at = (minute: number) => `2026-11-22T10:0${minute}:00.000Z`;
    const withLegs = operation(shopId, "completed");
    // L1's items do not add up to it: one synthetic item of the leg's amount, no file; L2's do.
    const legs = [
      { legId: "L2", amount: "500.00", completedAt: at(1), legacy: false, items: [{ id: "p3", amount: "500.00", completedAt: at(1), hasFile: true }] },
      { legId: "L1", amount: "1000.00", completedAt: at(0), legacy: false, items: [{ id: "p1", amount: "600.00", completedAt: at(0), hasFile: true }] },
    ];
    const noLegs = operation(shopId, "completed", { updatedAt: at(5) });
    await publishStatus(h.nc, withLegs, "pending", { providerEvidence: { legs } });
    await publishStatus(h.nc, noLegs, "pending", { providerEvidence: { legs: [] } });
    await waitFor(() => receiver.verified.length >= 2, 10_000, "two webhooks");
    const byOp = new Map(receiver.verified.map((r) => [r.json.data.operation_id, r.json.data]));

    const link = (id: string) => expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:8080/v1/receipts/${id}/file\\?expires=\\d+&signature=[0-9a-f]{64}$`));
    const synthetic = stableUuid(withLegs.operationId, "L1");
    const real = stableUuid(withLegs.operationId, "L2", "p3");
    expect(byOp.get(withLegs.operationId)).toMatchObject({
      receipt_evidence_status: "partial",
      receipts: [
        { id: synthetic, amount: 1000, completed_at: at(0), receipt_url: null },
        { id: real, amount: 500, completed_at: at(1), receipt_url: link(real) },
      ],
    });
    // The provider reported no leg: the operation's own captured amount, as receipts stores it.
    expect(byOp.get(noLegs.operationId)).toMatchObject({
      receipt_evidence_status: "partial",
      receipts: [{ id: stableUuid(noLegs.operationId, "operation"), amount: 1500, completed_at: at(5), receipt_url: null }],
    });
  });

  it("fires on awaiting_confirmation and every terminal status, never on pending or manual_check, which JetStream does not even send", async () => {
    const { shopId, receiver } = await shopWithReceiver();
    const sentBefore = await statusMessagesSent();
    const statuses = ["pending", "awaiting_confirmation", "manual_check", "completed", "cancelled", "declined", "expired"];
    const eventIds: string[] = [];
    for (const status of statuses) eventIds.push(await publishStatus(h.nc, operation(shopId, status), "pending"));
    await waitFor(() => receiver.verified.length >= 5, 10_000, "five webhooks");
    // Past the point where a sixth would have come: every event is through its consumer, and every delivery made is settled.
    await waitFor(statusConsumersCaughtUp, 10_000, "the status consumers to catch up");
    await settledDeliveries(shopId, 5);
    expect(receiver.verified.map((r) => r.json.type).sort()).toEqual(
      ["operation.awaiting_confirmation", "operation.cancelled", "operation.completed", "operation.declined", "operation.expired"].sort(),
    );
    expect((await deliveriesOf(shopId)).map((d) => d.eventType).sort()).toEqual(receiver.verified.map((r) => r.json.type).sort());
    expect((await statusMessagesSent()) - sentBefore).toBe(5);
    // Both durables record under one name, the one their single reconciler checks.
    const recorded = await h.unit.db.selectFrom("processedEvents").select("consumer").distinct().where("eventId", "in", eventIds).execute();
    expect(recorded).toEqual([{ consumer: scopedDurable(h.nc, STATUS_PROCESSED_AS) }]);
  });

  it("sends one message per transition: a republished event (same or new event id) does not fire twice", async () => {
    const { shopId, receiver } = await shopWithReceiver();
    const op = operation(shopId, "declined");
    const eventId = await publishStatus(h.nc, op, "pending");
    await waitFor(() => receiver.verified.length === 1, 10_000, "the webhook");
    await publishStatus(h.nc, op, "pending", { eventId }); // JetStream de-duplicates this one
    await publishStatus(h.nc, op, "pending"); // same transition under a new event id
    await publishStatus(h.nc, operation(shopId, "expired"), "pending"); // a marker that comes after
    await waitFor(() => receiver.verified.length >= 2, 10_000, "the marker");
    // Unrelated operations may overtake each other in the consumer: wait until every event is through it.
    await waitFor(statusConsumersCaughtUp, 10_000, "the status consumers to catch up");
    await settledDeliveries(shopId, 2);
    expect(receiver.verified.map((r) => r.json.type)).toEqual(["operation.declined", "operation.expired"]);
    expect(await deliveriesOf(shopId)).toHaveLength(2);
  });

  it("signs with both secrets for 24 h after a rotation, then with the new one only", async () => {
    const { shopId, receiver } = await shopWithReceiver();
    const [first] = receiver.secrets;
    await publishStatus(h.nc, operation(shopId, "expired"), "pending");
    await waitFor(() => receiver.verified.length === 1);
    expect(receiver.verified[0].signature.split(" ")).toHaveLength(1);

    const second = (await h.client.rotateSecret({ shopId })).secret;
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    receiver.secrets = [first, second];
    await publishStatus(h.nc, operation(shopId, "expired"), "pending");
    await waitFor(() => receiver.verified.length === 2);
    expect(receiver.verified[1].signature.split(" ")).toHaveLength(2);
    expect(receiver.verified[1].verifiedWith.sort()).toEqual([first, second].sort());

    // 24 h later (moved in the database): the old secret no longer signs.
    await h.unit.db.updateTable("webhookSecrets").set({ expiresAt: new Date(Date.now() - 1000) }).where("shopId", "=", shopId).where("expiresAt", "is not", null).execute();
    await publishStatus(h.nc, operation(shopId, "expired"), "pending");
    await waitFor(() => receiver.verified.length === 3);
    expect(receiver.verified[2].signature.split(" ")).toHaveLength(1);
    expect(receiver.verified[2].verifiedWith).toEqual([second]);
  });

  it("creates a secret on first need; the merchant's first rotation yields one that verifies the next message at once", async () => {
    const shopId = randomUUID();
    const receiver = await startReceiver();
    receivers.push(receiver);
    await publishShopChanged(h.nc, shopId, receiver.url);
    await publishStatus(h.nc, operation(shopId, "expired"), "pending");
    // The receiver knows no secret yet: the message is refused (401) and retried.
    await waitFor(() => receiver.rejected >= 1, 10_000, "an unverifiable attempt");
    expect(await h.unit.db.selectFrom("webhookSecrets").select("id").where("shopId", "=", shopId).execute()).toHaveLength(1);
    receiver.secrets = [(await h.client.rotateSecret({ shopId })).secret];
    await publishStatus(h.nc, operation(shopId, "cancelled"), "pending");
    await waitFor(() => receiver.verified.some((r) => r.json.type === "operation.cancelled"), 10_000, "the verified message");
    expect(receiver.verified.find((r) => r.json.type === "operation.cancelled")!.signature.split(" ")).toHaveLength(2);
  });
});

describe("delivery and retries", () => {
  it("a receiver failing 3 times then answering 200 gets exactly one successful delivery, same webhook-id throughout", async () => {
    const { shopId, receiver } = await shopWithReceiver((_req, n) => (n < 3 ? { status: 500, body: `boom ${n}` } : { status: 200, body: "ok" }));
    const eventId = await publishStatus(h.nc, operation(shopId, "completed"), "pending");
    await waitFor(() => receiver.successes().length === 1, 10_000, "the successful delivery");
    // Recorded as delivered: no attempt of it can follow.
    const [d] = await settledDeliveries(shopId, 1);
    expect(receiver.verified.map((r) => r.webhookId)).toEqual(Array(4).fill(`msg_${eventId}`));
    expect(receiver.verified.map((r) => r.answered)).toEqual([500, 500, 500, 200]);
    expect(new Set(receiver.verified.map((r) => r.body)).size).toBe(1);
    expect(receiver.successes()).toHaveLength(1);

    expect(d).toMatchObject({ status: "delivered", attempts: 4, webhookId: `msg_${eventId}` });
    expect(d.nextAttemptAt).toBeUndefined();
    expect(d.attemptLog.map((a) => [a.number, a.statusCode, a.responseSnippet])).toEqual([
      [1, 500, "boom 0"],
      [2, 500, "boom 1"],
      [3, 500, "boom 2"],
      [4, 200, "ok"],
    ]);
    for (const a of d.attemptLog) {
      expect(a.latencyMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(a.at)).not.toBeNaN();
    }
  });

  it("marks the delivery failed after the last attempt; a manual redelivery sends it again with the same webhook-id", async () => {
    let up = false;
    const { shopId, receiver } = await shopWithReceiver(() => (up ? { status: 202 } : { status: 503, body: "down" }));
    const eventId = await publishStatus(h.nc, operation(shopId, "cancelled"), "pending");
    const [failed] = await waitFor(async () => {
      const list = await deliveriesOf(shopId);
      return list[0]?.status === "failed" ? list : null;
    }, 10_000, "the failed delivery");
    // Failed is final, recorded after the fourth attempt's answer: that attempt was the last.
    expect(receiver.verified).toHaveLength(4);
    expect(failed.attempts).toBe(4);
    expect(failed.attemptLog.map((a) => a.statusCode)).toEqual([503, 503, 503, 503]);

    up = true;
    const { delivery } = await h.client.redeliver({ deliveryId: failed.id });
    expect(delivery?.status).toBe("pending");
    await waitFor(() => receiver.successes().length === 1, 10_000, "the redelivery");
    expect(receiver.successes()[0].webhookId).toBe(`msg_${eventId}`);
    expect(receiver.successes()[0].body).toBe(receiver.verified[0].body);
    const [after] = await waitFor(async () => ((await deliveriesOf(shopId))[0]?.status === "delivered" ? deliveriesOf(shopId) : null));
    expect(after.attempts).toBe(5);
    expect(after.attemptLog.map((a) => a.statusCode)).toEqual([503, 503, 503, 503, 202]);
  });

  /** A shop whose receiver answered 410 to one delivery and had a second one parked. */
  async function goneShop() {
    const { shopId, receiver } = await shopWithReceiver(() => ({ status: 410 }));
    await publishStatus(h.nc, operation(shopId, "expired"), "pending");
    await waitFor(async () => (await deliveriesOf(shopId))[0]?.status === "disabled", 10_000, "the disabled delivery");
    await publishStatus(h.nc, operation(shopId, "declined"), "pending");
    // Parked as it was made (disabled is final until the endpoint is enabled again): never sent.
    await settledDeliveries(shopId, 2);
    expect(receiver.verified).toHaveLength(1);
    expect((await deliveriesOf(shopId)).map((d) => [d.eventType, d.status, d.attempts])).toEqual([
      ["operation.declined", "disabled", 0],
      ["operation.expired", "disabled", 1],
    ]);
    return { shopId, receiver };
  }

  it("a 410 Gone disables the endpoint: deliveries are parked until the URL changes, then go to the new URL", async () => {
    const { shopId, receiver } = await goneShop();
    const next = await startReceiver({ secrets: receiver.secrets });
    receivers.push(next);
    await publishShopChanged(h.nc, shopId, next.url);
    await waitFor(() => next.successes().length === 2, 10_000, "the parked deliveries at the new URL");
    expect(next.successes().map((r) => r.json.type).sort()).toEqual(["operation.declined", "operation.expired"]);
    await publishStatus(h.nc, operation(shopId, "completed"), "pending");
    await waitFor(() => next.successes().length === 3, 10_000, "a new delivery to the new URL");
    expect(receiver.verified).toHaveLength(1);
  });

  it("redelivering after a 410 enables the endpoint again and resumes what was parked", async () => {
    const { shopId, receiver } = await goneShop();
    receiver.answer = () => ({ status: 204 }); // the merchant fixed the receiver, same URL
    const gone = (await deliveriesOf(shopId)).find((d) => d.eventType === "operation.expired")!;
    await h.client.redeliver({ deliveryId: gone.id });
    await waitFor(() => receiver.successes().length === 2, 10_000, "both deliveries");
    expect(receiver.successes().map((r) => r.json.type).sort()).toEqual(["operation.declined", "operation.expired"]);
  });

  it("a 410 from a URL the shop replaced while the attempt ran goes to the new URL instead of being dropped", async () => {
    const shopId = randomUUID();
    const secret = (await h.client.rotateSecret({ shopId })).secret;
    let oldHits = 0;
    const old = http.createServer((req, res) => {
      oldHits++;
      req.resume();
      setTimeout(() => res.writeHead(410).end(), 800);
    });
    await new Promise<void>((r) => old.listen(0, "127.0.0.1", r));
    const next = await startReceiver({ secrets: [secret] });
    receivers.push(next);
    try {
      await publishShopChanged(h.nc, shopId, `http://127.0.0.1:${(old.address() as AddressInfo).port}/old`);
      await publishStatus(h.nc, operation(shopId, "expired"), "pending");
      await waitFor(() => oldHits === 1, 10_000, "the attempt at the old URL");
      await publishShopChanged(h.nc, shopId, next.url); // before the old URL's 410 comes back
      await waitFor(() => next.successes().length === 1, 10_000, "the delivery at the new URL");
      const [delivery] = await waitFor(async () => ((await deliveriesOf(shopId))[0]?.status === "delivered" ? deliveriesOf(shopId) : null));
      expect(delivery.attemptLog.map((a) => a.statusCode)).toEqual([410, 204]);
      expect(oldHits).toBe(1);
    } finally {
      old.closeAllConnections();
      old.close();
    }
  });

  it("keeps a delivery waiting while the shop has no URL and sends it once one arrives", async () => {
    const shopId = randomUUID();
    const receiver = await startReceiver();
    receivers.push(receiver);
    receiver.secrets = [(await h.client.rotateSecret({ shopId })).secret];
    await publishStatus(h.nc, operation(shopId, "awaiting_confirmation"), "creating");
    const [waiting] = await waitFor(() => deliveriesOf(shopId).then((l) => (l.length ? l : null)), 10_000, "the waiting delivery");
    expect(waiting).toMatchObject({ status: "pending", attempts: 0 });
    expect(waiting.nextAttemptAt).toBeUndefined();
    // Another shop's delivery, made after this one, goes out: the worker has claimed since, and left this one waiting.
    const other = await shopWithReceiver();
    await publishStatus(h.nc, operation(other.shopId, "expired"), "pending");
    await waitFor(() => other.receiver.successes().length === 1, 10_000, "the other shop's delivery");
    expect(receiver.verified).toHaveLength(0);
    const [still] = await deliveriesOf(shopId);
    expect(still).toMatchObject({ id: waiting.id, status: "pending", attempts: 0 });
    expect(still.nextAttemptAt).toBeUndefined();
    await publishShopChanged(h.nc, shopId, receiver.url);
    await waitFor(() => receiver.successes().length === 1, 10_000, "the delivery");
  });

  it("ignores a shop change older than the one applied (out-of-order events)", async () => {
    const { shopId, receiver } = await shopWithReceiver();
    await handled(await publishShopChanged(h.nc, shopId, "http://127.0.0.1:9/stale", new Date(Date.now() - 60_000)));
    await publishStatus(h.nc, operation(shopId, "expired"), "pending");
    await waitFor(() => receiver.successes().length === 1, 10_000, "the delivery to the current URL");
  });

  it("reads at most the response cap of an endless answer and still counts the 2xx", async () => {
    const { shopId, receiver } = await shopWithReceiver(() => ({ status: 200, stream: true }));
    await publishStatus(h.nc, operation(shopId, "expired"), "pending");
    const [d] = await waitFor(async () => ((await deliveriesOf(shopId))[0]?.status === "delivered" ? deliveriesOf(shopId) : null), 10_000, "delivered");
    expect(receiver.verified).toHaveLength(1);
    expect(d.attemptLog).toHaveLength(1);
    expect(Buffer.byteLength(d.attemptLog[0].responseSnippet)).toBeLessThanOrEqual(1024);
    expect(d.attemptLog[0].responseSnippet).toMatch(/^x{100,}$/);
    expect(d.attemptLog[0].latencyMs).toBeLessThan(1000);
  });

  it("refuses to redeliver a delivery whose attempt is in flight (412 invalid_state), instead of pretending to", async () => {
    const { shopId, receiver } = await shopWithReceiver(() => "hang");
    await publishStatus(h.nc, operation(shopId, "expired"), "pending");
    await waitFor(() => receiver.verified.length === 1, 10_000, "the hanging attempt");
    const [inFlight] = await deliveriesOf(shopId);
    expect(await codeOf(h.client.redeliver({ deliveryId: inFlight.id }))).toBe("FailedPrecondition");
  });

  it("a hanging receiver does not hold up another shop's deliveries", async () => {
    const slow = await shopWithReceiver(() => "hang");
    const fast = await shopWithReceiver();
    for (let i = 0; i < 10; i++) await publishStatus(h.nc, operation(slow.shopId, "expired"), "pending");
    await waitFor(() => slow.receiver.verified.length >= 2, 10_000, "the slow shop's attempts to hang");
    const started = Date.now();
    for (let i = 0; i < 10; i++) await publishStatus(h.nc, operation(fast.shopId, "completed"), "pending");
    await waitFor(() => fast.receiver.successes().length === 10, 10_000, "the other shop's ten webhooks");
    // Before the slow receiver's attempts time out (WEBHOOK_TIMEOUT_MS, 1.5 s): had the other shop's
    // deliveries waited for a slot the slow shop held, they could not have arrived before then.
    expect(Date.now() - started).toBeLessThan(1500);
    // The slow shop never had more attempts in flight than its cap (2).
    expect(slow.receiver.verified.filter((r) => r.receivedAt < started + 1000).length).toBeLessThanOrEqual(2);
  });

  it("exports delivery metrics on the health port", async () => {
    const res = await fetch(`http://127.0.0.1:${h.unit.healthPort}/metrics`);
    const text = await res.text();
    expect(text).toMatch(/notifier_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    expect(text).toMatch(/notifier_webhook_deliveries_total\{outcome="failed"\} [1-9]/);
    expect(text).toMatch(/notifier_webhook_deliveries_total\{outcome="disabled"\} [1-9]/);
    expect(text).toMatch(/notifier_webhook_delivery_latency_seconds_count [1-9]/);
    expect(text).toMatch(/notifier_webhook_attempt_duration_seconds_bucket/);
  });
});

describe("RPC errors", () => {

  it("validates ids and answers NotFound for an unknown delivery", async () => {
    expect(await codeOf(h.client.rotateSecret({ shopId: "nope" }))).toBe("InvalidArgument");
    expect(await codeOf(h.client.listDeliveries({ shopId: "nope", limit: 1 }))).toBe("InvalidArgument");
    expect(await codeOf(h.client.redeliver({ deliveryId: "nope" }))).toBe("InvalidArgument");
    expect(await codeOf(h.client.redeliver({ deliveryId: randomUUID() }))).toBe("NotFound");
    expect(await h.client.listDeliveries({ shopId: randomUUID(), limit: 0 })).toMatchObject({ deliveries: [] });
  });
});
