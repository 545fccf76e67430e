/**
 * Webhooks through the whole system: a payment created through the public API and paid at the
 * sandbox provider reaches the merchant's receiver as a signed `operation.completed` webhook whose
 * data is the operation as get_operation_state shows it, its receipts made from the provider's
 * legs the completion carried (no evidence call) or, when those could not be had, asked for; the
 * admin API rotates the secret, lists deliveries with their attempt log and redelivers.
 */
import { waitFor } from "../../services/notifier/test/support/harness";
import { startReceiver, verifyingSecrets, type Receiver } from "../../services/notifier/test/support/receiver";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { metricTotal } from "../../test/support/metrics";
import { admin, createShopWithKey, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
let receiver: Receiver;
let shopId: string;
let m: ReturnType<typeof merchantClient>;
let sandbox: ReturnType<typeof sandboxControl>;

beforeAll(async () => {
  stack = await startStack();
  receiver = await startReceiver();
  const shop = await createShopWithKey(stack, { webhook_url: receiver.url });
  shopId = shop.shopId;
  m = merchantClient(stack, shop.apiKey);
  sandbox = sandboxControl(stack);
  receiver.secrets = [shop.webhookSecret];
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});
afterEach(() => sandbox.reset());

const paymentBody = () => ({ merchant_operation_id: newMoid("wh"), client_id: "client-1", method: "WT_RUB_C2C", amount: "1500.00", currency: "RUB" });
const webhooksFor = (operationId: string) => receiver.verified.filter((r) => r.json.data.operation_id === operationId);
/** The notifier's calls to operations' GetOperationState (every replica), as its RPC client counts them. */
const notifierAskedOperations = () =>
  metricTotal(stack.replicas.notifier.map((n) => n.healthPort), "grpc_client_handling_seconds_count", { method: "pgw.operations.v1.OperationsService/GetOperationState" });

describe("webhooks through the gateway stack", () => {
  it("delivers operation.completed, signed, with data equal to get_operation_state, its number opened from the event without asking operations", async () => {
    const askedBefore = await notifierAskedOperations();
    const created = await m.payment(paymentBody());
    expect(created.status).toBe(200);
    expect(created.body.number).toMatch(/^\d{16,19}$/);
    const id = created.body.operation_id;
    expect((await sandbox.pay(id, { amount: "1500.00" })).status).toBe(200);

    const [hook] = await waitFor(() => (webhooksFor(id).length ? webhooksFor(id) : null), 15_000, "the completed webhook");
    expect(hook.json).toMatchObject({ type: "operation.completed", id: hook.webhookId });
    expect(hook.webhookId).toMatch(/^msg_[0-9a-f-]{36}$/);
    expect(Date.parse(hook.json.created_at)).not.toBeNaN();
    expect(hook.verifiedWith).toEqual(receiver.secrets);
    const state = await m.state({ operation_id: id });
    expect(state.status).toBe(200);
    // receipt_url is a link signed at read time: compare items without it.
    const withoutLinks = (op: any) => ({ ...op, receipts: op.receipts.map(({ receipt_url, ...rest }: any) => ({ ...rest, has_url: receipt_url !== null })) });
    expect(withoutLinks(hook.json.data)).toEqual(withoutLinks(state.body));
    expect(hook.json.data).toMatchObject({ status: "completed", actual_amount: "1500.00", number: created.body.number });
    expect(await notifierAskedOperations()).toBe(askedBefore);

    // The notifier records the attempt after the receiver has answered: wait for that record.
    const delivery = await waitFor(async () => {
      const list = await admin(stack, "GET", `/admin/api/shops/${shopId}/webhook-deliveries`);
      expect(list.status).toBe(200);
      return list.body.deliveries.find((d: any) => d.operation_id === id && d.attempts > 0);
    }, 15_000, "the recorded attempt");
    expect(delivery).toMatchObject({ webhook_id: hook.webhookId, event_type: "operation.completed", status: "delivered", attempts: 1, next_attempt_at: null });
    expect(delivery.attempt_log).toEqual([{ number: 1, at: expect.any(String), status_code: 204, latency_ms: expect.any(Number), response_snippet: "", error: null }]);
  });

  it("fires operation.awaiting_confirmation at once when the route requires a receipt, and operation.cancelled on cancel", async () => {
    await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", requires_receipt: true });
    const created = await m.payment(paymentBody());
    expect(created.body.status).toBe("awaiting_confirmation");
    const id = created.body.operation_id;
    const [awaiting] = await waitFor(() => (webhooksFor(id).length ? webhooksFor(id) : null), 15_000, "the awaiting_confirmation webhook");
    expect(awaiting.json.type).toBe("operation.awaiting_confirmation");
    expect(awaiting.json.data).toMatchObject({ status: "awaiting_confirmation", external_confirmation: { required: true, methods: ["receipt"] }, receipts: [], receipt_evidence_status: "not_ready" });

    expect((await m.cancel({ operation_id: id })).body.outcome).toBe("cancelled");
    const cancelled = await waitFor(() => webhooksFor(id).find((r) => r.json.type === "operation.cancelled"), 15_000, "the cancelled webhook");
    expect(cancelled.json.data).toMatchObject({ status: "cancelled", receipts: [], receipt_evidence_status: "complete" });
    expect(cancelled.webhookId).not.toBe(awaiting.webhookId);
  });

  it("redelivers through the admin API with the same webhook-id", async () => {
    const created = await m.payment(paymentBody());
    const id = created.body.operation_id;
    await sandbox.decline(id);
    const [first] = await waitFor(() => (webhooksFor(id).length ? webhooksFor(id) : null), 15_000, "the declined webhook");
    expect(first.json.type).toBe("operation.declined");
    const list = await admin(stack, "GET", `/admin/api/shops/${shopId}/webhook-deliveries?limit=50`);
    const delivery = list.body.deliveries.find((d: any) => d.operation_id === id);
    await waitFor(async () => (await admin(stack, "GET", `/admin/api/shops/${shopId}/webhook-deliveries`)).body.deliveries.find((d: any) => d.id === delivery.id)?.status === "delivered");

    const again = await admin(stack, "POST", `/admin/api/webhook-deliveries/${delivery.id}/redeliver`);
    expect(again.status).toBe(200);
    expect(again.body.delivery).toMatchObject({ id: delivery.id, webhook_id: first.webhookId });
    await waitFor(() => webhooksFor(id).length === 2, 15_000, "the redelivery");
    expect(webhooksFor(id).map((r) => r.webhookId)).toEqual([first.webhookId, first.webhookId]);
    expect(webhooksFor(id)[1].body).toBe(first.body);
  });

  it("signs with both secrets after a rotation through the admin API", async () => {
    const [previous] = receiver.secrets;
    const rotated = await admin(stack, "POST", `/admin/api/shops/${shopId}/webhook-secret`);
    expect(rotated.status).toBe(201);
    expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    receiver.secrets = [rotated.body.secret];
    const created = await m.payment(paymentBody());
    await sandbox.expire(created.body.operation_id);
    const hook = await waitFor(() => webhooksFor(created.body.operation_id)[0], 15_000, "the expired webhook");
    expect(hook.json.type).toBe("operation.expired");
    expect(hook.signature.split(" ")).toHaveLength(2);
    expect(hook.verifiedWith).toEqual([rotated.body.secret]);
    // The previous secret still verifies it too (24 h overlap).
    const headers = { "webhook-id": hook.webhookId, "webhook-timestamp": hook.timestamp, "webhook-signature": hook.signature };
    expect(verifyingSecrets([previous, "whsec_" + Buffer.alloc(32, 1).toString("base64")], hook.body, headers)).toEqual([previous]);
  });

  it("shows a new shop's first signing secret once, in the creation response; its first webhook verifies with that secret alone", async () => {
    const own = await startReceiver();
    try {
      const { body: merchant } = await admin(stack, "POST", "/admin/api/merchants", { name: "M" });
      const created = await admin(stack, "POST", "/admin/api/shops", { merchant_id: merchant.id, name: "S", webhook_url: own.url });
      expect(created.status).toBe(201);
      expect(created.body.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
      expect((await admin(stack, "GET", `/admin/api/shops/${created.body.id}`)).body).not.toHaveProperty("webhook_secret");
      own.secrets = [created.body.webhook_secret];
      const key = await admin(stack, "POST", `/admin/api/shops/${created.body.id}/api-keys`, {});
      const op = await merchantClient(stack, key.body.api_key).payment(paymentBody());
      await sandbox.expire(op.body.operation_id);
      const hook = await waitFor(() => own.verified[0], 15_000, "the new shop's first webhook, verified");
      expect(hook.json.type).toBe("operation.expired");
      expect(hook.signature.split(" ")).toHaveLength(1);
      expect(own.rejected).toBe(0);
    } finally {
      await own.close();
    }
  });

  it("answers 404 for an unknown shop or delivery, 400 for a bad limit, 401 without the admin token", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    expect((await admin(stack, "POST", `/admin/api/shops/${unknown}/webhook-secret`)).status).toBe(404);
    expect((await admin(stack, "GET", `/admin/api/shops/${unknown}/webhook-deliveries`)).status).toBe(404);
    expect((await admin(stack, "POST", `/admin/api/webhook-deliveries/${unknown}/redeliver`)).status).toBe(404);
    expect((await admin(stack, "POST", `/admin/api/webhook-deliveries/not-a-uuid/redeliver`)).status).toBe(400);
    const bad = await admin(stack, "GET", `/admin/api/shops/${shopId}/webhook-deliveries?limit=0`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_error");
    const res = await fetch(`${stack.adminUrl}/admin/api/shops/${shopId}/webhook-secret`, { method: "POST" });
    expect(res.status).toBe(401);
  });
});

describe("receipt evidence of a provider's completion", () => {
  /** GetEvidence calls answered so far by every routing replica, and by every receipts replica. */
  const evidenceCalls = async () => ({
    routing: await metricTotal(stack.replicas.routing.map((r) => r.healthPort), "grpc_server_handling_seconds_count", { method: "pgw.routing.v1.RoutingService/GetEvidence" }),
    receipts: await metricTotal(stack.replicas.receipts.map((r) => r.healthPort), "grpc_server_handling_seconds_count", { method: "pgw.receipts.v1.ReceiptsService/GetEvidence" }),
  });
  /** Resolves once receipts has stored the operation's evidence (its status consumer materialised it). */
  const stored = (operationId: string) =>
    waitFor(async () => (await stack.services.receipts.sql.selectFrom("evidenceStates").select("status").where("operationId", "=", operationId).executeTakeFirst())?.status, 15_000, "receipts' stored evidence");
  /** The operation's data without the links' signatures, which each signer dates itself. */
  const unsigned = (data: any) => ({ ...data, receipts: data.receipts.map((i: any) => ({ ...i, receipt_url: i.receipt_url?.split("?")[0] ?? null })) });

  /** The completed webhook of `id` once it came, receipts' stored evidence, and the calls it took. */
  async function completion(id: string, before: Awaited<ReturnType<typeof evidenceCalls>>) {
    const hook = await waitFor(() => webhooksFor(id).find((r) => r.json.type === "operation.completed"), 15_000, "the completed webhook");
    const status = await stored(id);
    const calls = await evidenceCalls(); // before get_operation_state, which reads receipts' evidence
    return { data: hook.json.data, status, calls: { routing: calls.routing - before.routing, receipts: calls.receipts - before.receipts } };
  }

  it.each([
    ["a payment paid in two legs", "payment", [600, 600, 300]],
    ["a payout settled in three legs", "payout", [450, 250, 300]],
  ] as const)("%s: the webhook's receipts, made from the legs the completion carried, are get_operation_state's, and nobody asked for evidence", async (_name, type, amounts) => {
    const before = await evidenceCalls();
    let id: string;
    if (type === "payment") {
      id = (await m.payment(paymentBody())).body.operation_id;
      expect((await sandbox.pay(id, { amount: "1500.00", legs: ["1200.00", "300.00"] })).status).toBe(200);
    } else {
      expect((await admin(stack, "POST", `/admin/api/shops/${shopId}/adjustments`, { currency: "RUB", amount: "1100.00", reason: "payout funds" })).status).toBe(201);
      const created = await m.payout({ merchant_operation_id: newMoid("wh-payout"), client_id: "payee-1", method: "WT_RUB_PHONE", amount: "1000.00", currency: "RUB", number: "+79161234567", bankname: "sberbank" });
      expect(created.body).toMatchObject({ type: "payout", status: "pending" });
      id = created.body.operation_id;
      expect((await sandbox.settle(id, { legs: ["450.00", "250.00", "300.00"] })).status).toBe(200);
    }
    const { data, status, calls } = await completion(id, before);
    expect(calls).toEqual({ routing: 0, receipts: 0 });
    expect(status).toBe("complete");
    expect(data).toMatchObject({ status: "completed", receipt_evidence_status: "complete" });
    expect(data.receipts.map((i: { amount: number }) => i.amount)).toEqual(amounts);

    const state = await m.state({ operation_id: id });
    expect(state.status).toBe(200);
    expect(unsigned(data)).toEqual(unsigned(state.body));
    // The webhook's own links are signed as receipts signs them: one downloads the provider's file.
    expect(data.receipts.every((i: { receipt_url: string | null }) => i.receipt_url?.startsWith(`${stack.publicUrl}/v1/receipts/`))).toBe(true);
    const file = await fetch(data.receipts[0].receipt_url);
    expect([file.status, file.headers.get("content-type")]).toEqual([200, "application/pdf"]);
  });

  it("when the provider's evidence is not ready at its completion, the update goes out without legs and the webhook's receipts are asked for, still get_operation_state's", async () => {
    expect((await sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", evidence: "late" })).status).toBe(200);
    const before = await evidenceCalls();
    const id = (await m.payment(paymentBody())).body.operation_id;
    expect((await sandbox.pay(id, { amount: "1500.00", legs: ["1200.00", "300.00"] })).status).toBe(200);

    const { data, status, calls } = await completion(id, before);
    // Receipts asked routing (once per replica that materialised it); the notifier asked receipts.
    expect(calls.routing).toBeGreaterThanOrEqual(1);
    expect(calls.receipts).toBeGreaterThanOrEqual(1);
    expect(status).toBe("complete");
    expect(data).toMatchObject({ status: "completed", actual_amount: "1500.00", receipt_evidence_status: "complete" });
    expect(data.receipts.map((i: { amount: number }) => i.amount)).toEqual([600, 600, 300]);
    const state = await m.state({ operation_id: id });
    expect(unsigned(data)).toEqual(unsigned(state.body));
  });
});
