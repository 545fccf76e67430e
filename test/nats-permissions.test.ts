/**
 * NATS as deploy/nats/auth.conf sets it up: one user per unit, each allowed to publish only the
 * events it owns and to read only through its own durables. A real nats-server runs with that file
 * and passwords made here. Only operations creates the stream; every unit then runs on its own user
 * through a payment's whole life; and the server refuses a unit that publishes what another owns,
 * touches another's durable, or listens where it has no business.
 */
import { connectNats, ensureStream, STREAM_NAME } from "@pgw/kit/events";
import { createLogger, unitMetricsRegistry } from "@pgw/kit/runtime";
import { statusChangedSubject, TARIFFS_CHANGED_SUBJECT } from "@pgw/proto/subjects";
import { randomBytes, randomUUID } from "node:crypto";
import path from "node:path";
import { KeyCache } from "../gateway/src/auth/key-cache";
import { watchRevocations } from "../gateway/src/auth/revocations";
import { KeyRateLimits } from "../gateway/src/auth/key-rate-limits";
import { waitFor } from "@pgw/kit/testing";
import { PrivateNatsServer } from "@pgw/kit/testing";
import { startReceiver, type Receiver } from "../services/notifier/test/support/receiver";
import { merchantClient, newMoid, sandboxControl } from "./support/merchant";
import { metricTotal } from "./support/metrics";
import { pollUntil } from "./support/poll";
import { scrapeFamilies } from "./support/prometheus";
import { admin, createShopWithKey, startStack, type Stack } from "./support/stack";

const AUTH_CONF = path.join(__dirname, "..", "deploy", "nats", "auth.conf");
const UNITS = ["operations", "routing", "ledger", "receipts", "notifier", "gateway"] as const;
type Unit = (typeof UNITS)[number];
/** The durable consumers of each service (docs/architecture.md, Consumers). */
const DURABLES: [Unit, string][] = [
  ["operations", "operations-provider-updates"],
  ["routing", "routing-status"],
  ["ledger", "ledger-status"],
  ["receipts", "receipts-status"],
  ["notifier", "notifier-status"],
  ["notifier", "notifier-awaiting"],
  ["notifier", "notifier-shops"],
];

type NatsConnection = Awaited<ReturnType<typeof connectNats>>;

const log = createLogger("nats-permissions-test", "silent");
const passwords = Object.fromEntries(UNITS.map((unit) => [unit, `p${randomBytes(24).toString("hex")}`])) as Record<Unit, string>;

let server: PrivateNatsServer;
const connections = new Map<Unit, NatsConnection>();
/** What the server refused each connection, as it reported it. */
const refused = new Map<NatsConnection, { operation: string; subject: string }[]>();

/** `unit`'s connection with its own user, made as the unit makes it (kit connectNats). */
async function as(unit: Unit): Promise<NatsConnection> {
  const open = connections.get(unit);
  if (open) return open;
  const nc = await connectNats(server.url, unit, log, { user: unit, pass: passwords[unit] }, () => undefined);
  connections.set(unit, nc);
  const seen: { operation: string; subject: string }[] = [];
  refused.set(nc, seen);
  void (async () => {
    for await (const s of nc.status()) if (s.permissionContext) seen.push(s.permissionContext);
  })();
  return nc;
}

/** Waits for the server to report that it refused `nc` to `operation` (publish, subscription) on `subject`. */
const refusal = (nc: NatsConnection, operation: string, subject: string) =>
  waitFor(() => refused.get(nc)!.some((r) => r.operation === operation && r.subject === subject), 5000, `the server refusing ${operation} on ${subject}`);

const streamInfo = async () => (await (await as("operations")).jetstreamManager()).streams.info(STREAM_NAME);

beforeAll(async () => {
  server = await PrivateNatsServer.start(["-c", AUTH_CONF], Object.fromEntries(UNITS.map((unit) => [`PGW_NATS_${unit.toUpperCase()}_PASSWORD`, passwords[unit]])));
});
afterAll(async () => {
  for (const nc of connections.values()) await nc.close();
  await server?.destroy();
});

it("refuses a connection without a user of its own, or with another unit's password", async () => {
  await expect(connectNats(server.url, "anonymous", log, {}, () => undefined)).rejects.toThrow(/Authorization Violation/);
  await expect(connectNats(server.url, "ledger", log, { user: "ledger", pass: passwords.routing }, () => undefined)).rejects.toThrow(/Authorization Violation/);
});

it("lets only operations create the stream: another unit waits until operations has", async () => {
  const ledger = await as("ledger");
  const waiting = ensureStream(ledger);
  await refusal(ledger, "publish", "$JS.API.STREAM.CREATE.PGW");
  await expect((await ledger.jetstreamManager()).streams.info(STREAM_NAME)).rejects.toThrow(/stream not found/);
  const created = await ensureStream(await as("operations"));
  expect((await waiting).config).toEqual(created.config);
});

describe("the server refuses", () => {
  const notOperations = ["routing", "ledger", "receipts", "notifier", "gateway"] as const;
  const notRouting = ["operations", "ledger", "receipts", "notifier", "gateway"] as const;
  const publishes: [Unit, string][] = [
    // The status events the ledger books and receipts, routing and the notifier act on.
    ...notOperations.map((unit): [Unit, string] => [unit, statusChangedSubject("completed")]),
    // The provider's word, which operations applies.
    ...notRouting.map((unit): [Unit, string] => [unit, "pgw.routing.provider_update"]),
    // The webhook URL the notifier posts to, and the revocations the gateways act on.
    ["routing", "pgw.accounts.shop_changed"],
    ["gateway", "pgw.accounts.api_key_revoked"],
    // What gateway replicas admitted per API key: a forged report would starve a merchant.
    ["routing", "pgw_live.gateway.key_requests_admitted"],
    // The ledger's word that tariffs changed.
    ["operations", TARIFFS_CHANGED_SUBJECT],
    // The stream, and other units' durables.
    ["ledger", "$JS.API.STREAM.UPDATE.PGW"],
    ["ledger", "$JS.API.STREAM.PURGE.PGW"],
    ["ledger", "$JS.API.STREAM.DELETE.PGW"],
    ["ledger", "$JS.API.CONSUMER.MSG.NEXT.PGW.notifier-status"],
    ["ledger", "$JS.API.CONSUMER.DELETE.PGW.notifier-status"],
    ["ledger", "$JS.API.CONSUMER.CREATE.PGW.ledger-extra.pgw.routing.provider_update"],
    ["receipts", "$JS.ACK.PGW.ledger-status.1.1.1.1.0"],
    // Another unit's inbox, where a message could pass for a JetStream delivery.
    ["routing", "_INBOX_ledger.forged"],
  ];
  it.each(publishes)("%s publishing on %s, and nothing reaches the stream", async (unit, subject) => {
    const before = (await streamInfo()).state.last_seq;
    const nc = await as(unit);
    nc.publish(subject, new Uint8Array([1]));
    await refusal(nc, "publish", subject);
    expect((await streamInfo()).state.last_seq).toBe(before);
  });

  const subscriptions: [Unit, string][] = [
    ["gateway", "pgw.operation.status_changed.>"],
    ["ledger", "pgw.>"],
    ["ledger", "_INBOX.>"],
    ["ledger", "_INBOX_notifier.>"],
    ["gateway", "_INBOX_operations.>"],
  ];
  it.each(subscriptions)("%s subscribing to %s", async (unit, subject) => {
    const nc = await as(unit);
    nc.subscribe(subject);
    await refusal(nc, "subscription", subject);
  });
});

describe("every unit on its own user", () => {
  let stack: Stack;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    stack = await startStack({
      natsUrl: () => server.url,
      // auth.conf names the subjects and durables of a deployment without a namespace.
      natsNamespace: "",
      env: Object.fromEntries(UNITS.map((unit) => [unit, { NATS_USER: unit, NATS_PASSWORD: passwords[unit] }])),
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  it("takes payments through their whole life, and each durable acknowledges all it was given", async () => {
    const shop = await createShopWithKey(stack, { webhook_url: receiver.url });
    receiver.secrets = [shop.webhookSecret];
    const m = merchantClient(stack, shop.apiKey);
    const sandbox = sandboxControl(stack);
    const webhook = (operationId: string, type: string) => waitFor(() => receiver.verified.find((r) => r.json.data.operation_id === operationId && r.json.type === type), 15_000, type);
    const payment = (amount: string) => m.payment({ merchant_operation_id: newMoid("natsauth"), client_id: "client-1", method: "WT_RUB_C2C", amount, currency: "RUB" });

    // Routing's provider update completes it at operations; the ledger books the completion, receipts
    // materialises its evidence, and the notifier, told the shop's URL, posts the webhook.
    const paid = (await payment("500.00")).body.operation_id;
    expect((await sandbox.pay(paid, { amount: "500.00" })).status).toBe(200);
    // 500.00 less the default tariff's 2.5 % commission.
    expect(await m.waitForBalance("RUB", "487.50", 15_000)).toMatchObject({ balance: "487.50" });
    await webhook(paid, "operation.completed");

    // awaiting_confirmation reaches the notifier's second durable; the cancel reaches routing, which releases the allocation.
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", requires_receipt: true });
    const held = (await payment("300.00")).body;
    expect(held.status).toBe("awaiting_confirmation");
    await webhook(held.operation_id, "operation.awaiting_confirmation");
    expect((await m.cancel({ operation_id: held.operation_id })).body.outcome).toBe("cancelled");
    await webhook(held.operation_id, "operation.cancelled");
    await sandbox.reset();

    for (const [unit, durable] of DURABLES) {
      const jsm = await (await as(unit)).jetstreamManager();
      const done = (i: { num_pending: number; num_ack_pending: number; ack_floor: { stream_seq: number } }) => i.num_pending === 0 && i.num_ack_pending === 0 && i.ack_floor.stream_seq > 0;
      const info = await pollUntil(() => jsm.consumers.info(STREAM_NAME, durable), done, 10_000);
      expect({ durable, pending: info.num_pending, unacknowledged: info.num_ack_pending, acknowledgedAny: info.ack_floor.stream_seq > 0 }).toEqual({ durable, pending: 0, unacknowledged: 0, acknowledgedAny: true });
    }
  }, 90_000);

  it("lets each unit read its own durables' lag for its /metrics", async () => {
    for (const [unit, durable] of DURABLES) {
      const families = await scrapeFamilies(stack.services[unit as keyof Stack["services"]].healthPort);
      const shown = (families.get("jetstream_consumer_pending_messages")?.samples ?? []).map((s) => s.labels.consumer);
      expect({ unit, durable, shown: shown.includes(durable) }).toEqual({ unit, durable, shown: true });
    }
  });

  it("lets a gateway hear of a revoked key", async () => {
    const shop = await createShopWithKey(stack);
    const gateway = await as("gateway");
    const cache = new KeyCache(60_000);
    const principal = { apiKeyId: shop.apiKeyId, merchantId: shop.merchantId, shopId: shop.shopId, rateLimitRps: 10 };
    await cache.fetch("cached-key-hash", { resolve: async () => principal, refreshFailed: () => undefined });
    const watching = watchRevocations(gateway, cache, log);
    try {
      await gateway.flush(); // the server has taken the subscription
      expect((await admin(stack, "POST", `/admin/api/api-keys/${shop.apiKeyId}/revoke`)).status).toBe(200);
      await waitFor(() => !cache.has("cached-key-hash"), 10_000, "the revocation evicting the key");
    } finally {
      watching.stop();
    }
  });

  it("lets the ledger tell operations that tariffs changed, so creates apply a new tariff without asking Quote each time", async () => {
    const shop = await createShopWithKey(stack);
    const m = merchantClient(stack, shop.apiKey);
    const payment = async () => (await m.payment({ merchant_operation_id: newMoid("natsauth"), client_id: "client-1", method: "WT_RUB_C2C", amount: "1000.00", currency: "RUB" })).body;
    expect((await payment()).commission_amount).toBe("25.00");
    await stack.services.ledger.sql
      .insertInto("tariffs")
      .values({ id: randomUUID(), shopId: shop.shopId, type: "payment", method: "WT_RUB_C2C", currency: "RUB", percent: "10", fixed: "1", minimum: "0" })
      .execute();
    // Heard only through the signal: without it operations would go on applying the default tariff.
    await pollUntil(payment, (op) => op.commission_amount === "101.00", 10_000);
    // Subscribed, so it keeps the new tariff: four more creates ask Quote at most once per replica.
    const quotes = () => metricTotal(stack.replicas.ledger.map((r) => r.healthPort), "grpc_server_handling_seconds_count", { method: "pgw.ledger.v1.LedgerService/Quote" });
    const before = await quotes();
    for (let i = 0; i < 4; i++) expect((await payment()).commission_amount).toBe("101.00");
    expect((await quotes()) - before).toBeLessThan(4);
    expect((await quotes()) - before).toBeLessThanOrEqual(stack.replicas.operations.length);
  });

  it("lets gateway replicas tell each other what they admitted per API key", async () => {
    const other = await connectNats(server.url, "gateway", log, { user: "gateway", pass: passwords.gateway }, () => undefined);
    const registries = [unitMetricsRegistry(), unitMetricsRegistry()];
    // A clock that stands still: buckets never refill, so tokens count requests exactly.
    const [mine, theirs] = [await as("gateway"), other].map((nc, i) => new KeyRateLimits(nc, { registry: registries[i], log, now: () => 0 }));
    try {
      await other.flush(); // the server has taken the subscription
      // A key of this test's own: the stack's gateways report their keys on the same subject.
      const apiKeyId = randomUUID();
      expect(mine.take(apiKeyId, 1000).allowed).toBe(true);
      // What the other replica heard of this key, read from its copy of the bucket (2,000 tokens), less its own takes.
      let ownTakes = 0;
      const heard = () => 2000 - theirs.take(apiKeyId, 1000).remaining - ++ownTakes;
      await waitFor(async () => heard() === 1, 10_000, "the other replica hearing of the admitted request");
      expect((await registries[1].getSingleMetric("gateway_key_rate_peer_requests_total")!.get()).values[0]?.value).toBeGreaterThanOrEqual(1);
    } finally {
      mine.stop();
      theirs.stop();
      await other.close();
    }
  });
});
