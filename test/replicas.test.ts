/**
 * Two replicas of every unit (the provider sandbox alone), each unit's behind one Service address
 * that hands every new connection to the next replica, on one database per service and one NATS
 * namespace: what only shows with several replicas. Runs in the replicated jest pass (package.json
 * `test`), one file at a time: a replicated stack holds about as many Postgres connections as two.
 */
import { sql } from "kysely";
import { reconcileAccounts } from "../services/ledger/src/store/accounts";
import { waitFor } from "../services/notifier/test/support/harness";
import { startReceiver, type Receiver } from "../services/notifier/test/support/receiver";
import { metricValue } from "./support/metrics";
import { merchantClient, newMoid, sandboxControl } from "./support/merchant";
import { pollUntil } from "./support/poll";
import { admin, createShopWithKey, startStack, type Stack } from "./support/stack";

const SERVICES = ["operations", "routing", "ledger", "receipts", "notifier"] as const;

let stack: Stack;
let receiver: Receiver;
let shop: Awaited<ReturnType<typeof createShopWithKey>>;
let m: ReturnType<typeof merchantClient>;
let sandbox: ReturnType<typeof sandboxControl>;
/** The merchant's client and the admin API of one gateway replica, not through the address. */
const gatewayReplica = (i: number, apiKey = shop.apiKey) => merchantClient({ publicUrl: `http://127.0.0.1:${stack.replicas.gateway[i].httpPort}` }, apiKey);
const adminOf = (i: number) => ({ adminUrl: `http://127.0.0.1:${stack.replicas.gateway[i].adminPort}` });

beforeAll(async () => {
  stack = await startStack({ replicas: 2 });
  receiver = await startReceiver();
  shop = await createShopWithKey(stack, { webhook_url: receiver.url });
  receiver.secrets = [shop.webhookSecret];
  m = merchantClient(stack, shop.apiKey);
  sandbox = sandboxControl(stack);
  expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "100000.00", reason: "prefunding" })).status).toBe(201);
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const paymentBody = (amount = "1500.00") => ({ merchant_operation_id: newMoid("rep"), client_id: "client-1", method: "WT_RUB_C2C", amount, currency: "RUB" });
const payoutBody = () => ({ ...paymentBody("100.00"), number: "4111111111111111" });
const rowsForKey = async (moid: string) =>
  Number((await stack.services.operations.sql.selectFrom("operations").select((eb) => eb.fn.countAll().as("n")).where("shopId", "=", shop.shopId).where("merchantOperationId", "=", moid).executeTakeFirstOrThrow()).n);

/** Creates `count` payments at once through the public address and has the sandbox pay each; answers their ids. */
async function paidPayments(count: number): Promise<string[]> {
  const created = await Promise.all(Array.from({ length: count }, () => m.payment(paymentBody())));
  expect(created.map((c) => c.status)).toEqual(Array(count).fill(200));
  const ids = created.map((c) => c.body.operation_id as string);
  for (const id of ids) expect((await sandbox.pay(id, { amount: "1500.00" })).status).toBe(200);
  return ids;
}

/**
 * Waits until each operation of `ids` has had a webhook of each of `types` delivered, then expects
 * exactly those at the receiver and in the delivery log, each sent once (a second claim of a
 * delivery would show as a second attempt).
 */
async function expectEachWebhookOnce(ids: string[], types: string[]) {
  const received = (id: string) => receiver.verified.filter((r) => r.json.data.operation_id === id).map((r) => r.json.type as string).sort();
  await waitFor(() => ids.every((id) => types.every((t) => received(id).includes(t))) || null, 20_000, "every webhook delivered");
  const deliveries = await pollUntil(
    async () => (await admin(stack, "GET", `/admin/api/shops/${shop.shopId}/webhook-deliveries?limit=100`)).body.deliveries.filter((d: any) => ids.includes(d.operation_id)),
    (ds: any[]) => ds.length === ids.length * types.length && ds.every((d) => d.status === "delivered"),
  );
  expect(deliveries).toHaveLength(ids.length * types.length);
  expect(deliveries.map((d: any) => [d.status, d.attempt_log.length])).toEqual(deliveries.map(() => ["delivered", 1]));
  for (const id of ids) expect(received(id)).toEqual([...types].sort());
}

describe("two replicas of every unit", () => {
  it("the same key sent to both gateways at the same moment makes one operation with one id, for payments and payouts", async () => {
    for (const body of [paymentBody(), paymentBody(), paymentBody(), payoutBody(), payoutBody()]) {
      const path = "number" in body ? "/v1/payout" : "/v1/payment";
      const answers = await Promise.all([gatewayReplica(0).post(path, body), gatewayReplica(1).post(path, body)]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(answers[1].body.operation_id).toBe(answers[0].body.operation_id);
      expect(await rowsForKey(body.merchant_operation_id)).toBe(1);
    }
    // One reserve per payout: 2 × 100.00 plus commission held, not twice that.
    const reserves = await stack.services.ledger.sql.selectFrom("reserves").select("operationId").where("shopId", "=", shop.shopId).execute();
    expect(reserves).toHaveLength(2);
  });

  it("delivers each transition's webhook once, though both notifiers consume the events and both relays publish", async () => {
    await expectEachWebhookOnce(await paidPayments(6), ["operation.completed"]);
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", requires_receipt: true });
    const awaiting = await Promise.all(Array.from({ length: 4 }, () => m.payment(paymentBody()))).finally(() => sandbox.reset());
    expect(awaiting.map((c) => c.body.status)).toEqual(Array(4).fill("awaiting_confirmation"));
    const ids = awaiting.map((c) => c.body.operation_id as string);
    for (const id of ids) expect((await m.cancel({ operation_id: id })).body.outcome).toBe("cancelled");
    await expectEachWebhookOnce(ids, ["operation.awaiting_confirmation", "operation.cancelled"]);
  });

  it("a key revoked through one gateway is refused by the other within a second", async () => {
    const key = await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/api-keys`, { label: "revoked on one replica" });
    // Replica 1 has the key cached as valid before the revocation: only the event can evict it.
    expect((await gatewayReplica(1, key.body.api_key).get("/v1/balances")).status).toBe(200);
    expect((await admin(adminOf(0), "POST", `/admin/api/api-keys/${key.body.id}/revoke`)).status).toBe(200);
    expect((await gatewayReplica(0, key.body.api_key).get("/v1/balances")).status).toBe(401);
    const other = await pollUntil(() => gatewayReplica(1, key.body.api_key).get("/v1/balances"), (res) => res.status === 401, 1_000);
    expect(other.status).toBe(401);
  });

  it("books every completion once across both ledgers and reconcilers: entries sum to zero, balances equal their postings, every outbox drains", async () => {
    const ids = await paidPayments(4);
    for (const id of ids) expect((await m.waitForStatus(id, "completed", 15_000)).body.status).toBe("completed");
    const completionEntries = () =>
      stack.services.ledger.sql.selectFrom("journalEntries").select("source").where("source", "in", ids.map((id) => `complete:${id}`)).execute();
    expect(await pollUntil(completionEntries, (rows) => rows.length === ids.length)).toHaveLength(ids.length);
    // The ledger's own check (what its Reconcile RPC runs) over the shared journal.
    const reconciled = await reconcileAccounts(stack.services.ledger.sql);
    expect(reconciled.checked).toBeGreaterThan(0);
    expect({ mismatches: reconciled.mismatches, unbalanced: reconciled.unbalanced }).toEqual({ mismatches: [], unbalanced: [] });
    const unpublished = async () => {
      const counts = await Promise.all(SERVICES.map(async (unit) => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM outbox WHERE published_at IS NULL`.execute(stack.services[unit].sql)).rows[0].n)));
      return counts.reduce((a, b) => a + b, 0);
    };
    expect(await pollUntil(unpublished, (n) => n === 0)).toBe(0);
  });

  it("spreads traffic over every replica of every unit", async () => {
    // Calls each service replica served itself (health checks aside), from its own metrics.
    const servedCalls = (port: number) => metricValue(port, "grpc_server_handling_seconds_count", { method: /^pgw\./ });
    const idle = async () => {
      const served = await Promise.all(SERVICES.flatMap((unit) => stack.replicas[unit].map(async (r) => ((await servedCalls(r.healthPort)) > 0 ? [] : [`${unit}:${r.grpcPort}`]))));
      const gatewayPorts = stack.replicas.gateway.flatMap((g) => [g.httpPort, g.adminPort]);
      const untouched = gatewayPorts.filter((p) => !stack.addresses!.gateway.connections.get(p) && !stack.addresses!.admin.connections.get(p)).map((p) => `gateway:${p}`);
      return [...served.flat(), ...untouched];
    };
    // Each round is concurrent traffic through every address; the round robin is per connection.
    const round = async () => {
      const ids = await paidPayments(4);
      await Promise.all([...ids.map((id) => m.state({ operation_id: id })), ...ids.map(() => admin(stack, "GET", `/admin/api/shops/${shop.shopId}/webhook-deliveries`))]);
      return idle();
    };
    expect(await pollUntil(round, (left) => left.length === 0, 30_000)).toEqual([]);
  });

  it("keeps serving when one operations replica stops mid-traffic, and the other takes over its events", async () => {
    const during = Promise.all(Array.from({ length: 8 }, () => m.payment(paymentBody())));
    await stack.stopReplica("operations", 1);
    // A create the stopping replica could not finish is refused (503), never half-done.
    for (const res of await during) {
      expect([200, 503]).toContain(res.status);
      if (res.status === 200) expect((await m.state({ operation_id: res.body.operation_id })).body.operation_id).toBe(res.body.operation_id);
    }
    const after = await paidPayments(4);
    for (const id of after) expect((await m.waitForStatus(id, "completed", 15_000)).body.status).toBe("completed");
  });
});
