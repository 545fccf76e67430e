/**
 * docs/openapi.yaml against the running system. The main flows go through the public API of a
 * whole stack, and every answer (status, the headers the document requires, body) is checked
 * against the document, as are the webhooks a merchant's receiver verified (test/support/openapi.ts,
 * Ajv). The last test asserts that every path and method of the document, and its webhook, was
 * exercised, so the document cannot name what the code does not answer.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { startReceiver, type Receiver } from "../../services/notifier/test/support/receiver";
import { PNG_1X1, receiptPdf } from "../../services/receipts/test/receipt-pdfs";
import { sandboxControl } from "../../test/support/merchant";
import { type Exchange, OpenApiChecker } from "../../test/support/openapi";
import { pollUntil } from "../../test/support/poll";
import { admin, createShopWithKey, startStack, type Stack } from "../../test/support/stack";
import { readOpenApiDocument } from "../src/routes/openapi-document";

const document = readOpenApiDocument(path.join(__dirname, "..", "src")) as Record<string, any>;
const checker = new OpenApiChecker(document);

let stack: Stack;
let sandbox: ReturnType<typeof sandboxControl>;
let receiver: Receiver;
let apiKey: string;

beforeAll(async () => {
  // A small budget for requests without a valid key, so that one test can spend it (burst 4).
  stack = await startStack({ env: { gateway: { UNAUTHENTICATED_RATE_LIMIT_RPS: "2" } } });
  sandbox = sandboxControl(stack);
  receiver = await startReceiver();
  const shop = await createShopWithKey(stack, { webhook_url: receiver.url, checkout_enabled: true });
  receiver.secrets = [shop.webhookSecret];
  apiKey = shop.apiKey;
  expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "100000.00", reason: "prefunding" })).status).toBe(201);
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});
afterEach(() => sandbox.reset());

interface Call {
  /** The API key; none when null. The shop's key by default. */
  key?: string | null;
  json?: unknown;
  form?: FormData;
  /** Any other body, sent as it is. */
  body?: string;
  headers?: Record<string, string>;
}

/** One call to the public API, its answer checked against the document. */
async function call(method: string, url: string, { key = apiKey, json, form, body: raw, headers = {} }: Call = {}): Promise<Exchange> {
  const res = await fetch(stack.publicUrl + url, {
    method,
    headers: { ...(key ? { "x-api-key": key } : {}), ...(json !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: json !== undefined ? JSON.stringify(json) : (form ?? raw),
  });
  const text = await res.text();
  let body: unknown = text || null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: the text */
  }
  const answer = { status: res.status, headers: Object.fromEntries(res.headers), body };
  checker.check(method, url, answer, json);
  return answer;
}

let seq = 0;
const createBody = (extra: Record<string, unknown> = {}) => ({ merchant_operation_id: `oas-${Date.now()}-${++seq}`, client_id: "client-1", method: "WT_RUB_C2C", amount: "1500.00", currency: "RUB", ...extra });
const cardPayout = (extra: Record<string, unknown> = {}) => createBody({ number: "4111 1111 1111 1111", name: "Anna K", ...extra });
const stateOf = (operationId: string) => call("POST", "/v1/get_operation_state", { json: { operation_id: operationId } });
const waitForStatus = (operationId: string, status: string) => pollUntil(() => stateOf(operationId), (res) => (res.body as any)?.status === status, 15_000);

function confirmForm(operationId: string, file: Buffer, type: string, filename: string): FormData {
  const form = new FormData();
  form.append("operation_id", operationId);
  form.append("confirmation_type", "receipt");
  form.append("receipt", new Blob([file], { type }), filename);
  return form;
}

describe("the document itself", () => {
  it("is served at GET /openapi.json without an API key, as JSON equal to docs/openapi.yaml", async () => {
    const res = await call("GET", "/openapi.json", { key: null });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body).toEqual(document);
  });
});

describe("probes", () => {
  it.each(["/livez", "/healthz", "/readyz"])("%s answers 204 without a key", async (probe) => {
    expect((await call("GET", probe, { key: null })).status).toBe(204);
  });
});

describe("payments", () => {
  it("creates a payment, reads it by both ids, completes it with receipts and serves its receipt file", async () => {
    const body = createBody();
    const created = await call("POST", "/v1/payment", { json: body });
    expect(created.body).toMatchObject({ status: "pending", expected_amount: "1500.00", actual_amount: "0.00" });
    const id = (created.body as any).operation_id;
    expect((await call("POST", "/v1/get_operation_state", { json: { merchant_operation_id: body.merchant_operation_id } })).body).toMatchObject({ operation_id: id, receipt_evidence_status: "not_ready", receipts: [] });
    // The same key and body answer the same payment.
    expect((await call("POST", "/v1/payment", { json: body })).body).toMatchObject({ operation_id: id });

    expect((await sandbox.pay(id, { amount: "1500.00" })).status).toBe(200);
    const done = await waitForStatus(id, "completed");
    expect(done.body).toMatchObject({ actual_amount: "1500.00", recorded_amount: "1500.00", recorded_currency: "RUB", receipt_evidence_status: "complete" });
    const [item] = (done.body as any).receipts;
    expect(item.receipt_url).toEqual(expect.any(String));
    const link = new URL(item.receipt_url);
    const file = await call("GET", link.pathname + link.search, { key: null });
    expect(file.status).toBe(200);
    expect(file.headers["content-type"]).toBe("application/pdf");
    const signed = link.pathname + link.search;
    const altered = await call("GET", signed.slice(0, -1) + (signed.endsWith("0") ? "1" : "0"), { key: null });
    expect(altered.status).toBe(404);

    const cancel = await call("POST", "/v1/cancel_operation", { json: { operation_id: id } });
    expect(cancel.body).toMatchObject({ outcome: "already_terminal", operation: { operation_id: id, status: "completed" } });
  });

  it("creates payment links: a URL with the hosted checkout, null without it; expires_at when the provider sets one", async () => {
    await sandbox.scenario({ method: "WT_RUB_PHONE", accept: "accept", expires_in_s: 600 });
    const withCheckout = await call("POST", "/v1/payment/link", { json: createBody({ method: "WT_RUB_PHONE" }) });
    expect(withCheckout.body).toMatchObject({ payment_url: `${stack.publicUrl}/pay/${(withCheckout.body as any).operation_id}`, expires_at: expect.any(String) });
    const other = await createShopWithKey(stack);
    const without = await call("POST", "/v1/payment/link", { key: other.apiKey, json: createBody() });
    expect(without.body).toMatchObject({ status: "pending", payment_url: null });
  });

  it("quotes fx on a converted payment and records the ledger fact once it completes", async () => {
    const usdtShop = await createShopWithKey(stack, { settlement_currency: "USDT" });
    const created = await call("POST", "/v1/payment", { key: usdtShop.apiKey, json: createBody({ amount: "1000.00" }) });
    expect(created.body).toMatchObject({ status: "pending", settlement_currency: "USDT", fx_source: expect.any(String), fx_rate: expect.any(String) });
    const id = (created.body as any).operation_id;
    await sandbox.pay(id, { amount: "1000.00" });
    const done = await pollUntil(() => call("POST", "/v1/get_operation_state", { key: usdtShop.apiKey, json: { operation_id: id } }), (res) => (res.body as any)?.status === "completed", 15_000);
    expect(done.body).toMatchObject({ recorded_currency: "USDT", recorded_amount: expect.stringMatching(/^\d+\.\d{6}$/) });
  });

  it("cancels a pending payment, answers a repeat the same, and tells a cancel of a payout apart (412)", async () => {
    const created = await call("POST", "/v1/payment", { json: createBody() });
    const id = (created.body as any).operation_id;
    for (let i = 0; i < 2; i++) {
      const res = await call("POST", "/v1/cancel_operation", { json: { operation_id: id, reason: "customer left" } });
      expect(res.body).toMatchObject({ outcome: "cancelled", operation: { operation_id: id, status: "cancelled" } });
    }
    expect((await stateOf(id)).body).toMatchObject({ status: "cancelled", receipts: [], receipt_evidence_status: "complete" });

    const payout = await call("POST", "/v1/payout", { json: cardPayout() });
    const refused = await call("POST", "/v1/cancel_operation", { json: { merchant_operation_id: "x", operation_id: (payout.body as any).operation_id } });
    expect(refused.status).toBe(400);
    expect((await call("POST", "/v1/cancel_operation", { json: { operation_id: (payout.body as any).operation_id } })).status).toBe(412);
    expect((await call("POST", "/v1/cancel_operation", { json: { merchant_operation_id: "never-created" } })).status).toBe(404);
  });

  it("answers 503 no_provider_available with Retry-After when every provider declines", async () => {
    await sandbox.scenario({ method: "WT_RUB_PHONE", accept: "reject" });
    const res = await call("POST", "/v1/payment", { json: createBody({ method: "WT_RUB_PHONE" }) });
    expect(res).toMatchObject({ status: 503, body: { error: { code: "no_provider_available" } } });
  });
});

describe("receipt confirmation", () => {
  beforeEach(() => sandbox.scenario({ method: "WT_RUB_C2C", accept: "accept", requires_receipt: true }));

  it("completes a payment on a genuine PDF, then refuses another upload (412)", async () => {
    const created = await call("POST", "/v1/payment", { json: createBody({ amount: "700.00" }) });
    const op = created.body as any;
    expect(op).toMatchObject({ status: "awaiting_confirmation", external_confirmation: { required: true, methods: ["receipt"] } });
    await sandbox.pay(op.operation_id, { amount: "700.00" });
    const pdf = await receiptPdf({ amount: "700.00 RUB", recipient: op.number });
    const confirmed = await call("POST", "/v1/confirm_payment", { form: confirmForm(op.operation_id, pdf, "application/pdf", "receipt.pdf") });
    expect(confirmed.body).toMatchObject({ status: "completed", actual_amount: "700.00" });
    const again = await call("POST", "/v1/confirm_payment", { form: confirmForm(op.operation_id, pdf, "application/pdf", "receipt.pdf") });
    expect(again.status).toBe(412);
  });

  it("puts a payment with an image receipt under manual check, which a cancel ends", async () => {
    const op = (await call("POST", "/v1/payment", { json: createBody() })).body as any;
    const notAReceipt = await call("POST", "/v1/confirm_payment", { form: confirmForm(op.operation_id, Buffer.from("hello"), "text/plain", "receipt.txt") });
    expect(notAReceipt.status).toBe(415);
    const confirmed = await call("POST", "/v1/confirm_payment", { form: confirmForm(op.operation_id, PNG_1X1, "image/png", "receipt.png") });
    expect(confirmed.body).toMatchObject({ status: "manual_check", manual_check_reason: "not_terminal" });
    expect((await stateOf(op.operation_id)).body).toMatchObject({ status: "manual_check", manual_check_reason: "not_terminal" });
    expect((await call("POST", "/v1/cancel_operation", { json: { operation_id: op.operation_id } })).body).toMatchObject({ outcome: "cancelled" });
  });

  it("answers 400 for missing parts and 404 for an operation that is not the shop's", async () => {
    const missing = await call("POST", "/v1/confirm_payment", { form: new FormData() });
    expect(missing.status).toBe(400);
    const unknown = await call("POST", "/v1/confirm_payment", { form: confirmForm("00000000-0000-4000-8000-000000000000", PNG_1X1, "image/png", "r.png") });
    expect(unknown.status).toBe(404);
  });
});

describe("payouts, balances and banks", () => {
  it("creates card and phone payouts and settles one", async () => {
    const card = await call("POST", "/v1/payout", { json: cardPayout() });
    expect(card.body).toMatchObject({ type: "payout", status: "pending", number: "4111111111111111" });
    const phone = await call("POST", "/v1/payout", { json: createBody({ method: "WT_RUB_PHONE", number: "+79161234567", bankname: "sberbank" }) });
    expect(phone.body).toMatchObject({ bankname: "sberbank", bankname_details: expect.any(String), name: "аноним" });
    await sandbox.settle((card.body as any).operation_id);
    expect((await waitForStatus((card.body as any).operation_id, "completed")).body).toMatchObject({ actual_amount: "1500.00" });
  });

  it("answers balances in every currency, and the bank dictionaries", async () => {
    const balances = await call("GET", "/v1/balances");
    expect((balances.body as any).balances.map((b: { currency: string }) => b.currency)).toEqual(["RUB", "USDT"]);
    expect((await call("GET", "/v1/banks")).body).toMatchObject({ banks: expect.arrayContaining([{ code: "sberbank", name: expect.any(String) }]) });
    expect((await call("GET", "/v1/banks?currency=USDT")).body).toEqual({ banks: [] });
    expect((await call("GET", "/v1/banks?currency=EUR")).status).toBe(400);
  });
});

describe("errors", () => {
  it("answers 401 without a key and with an unknown one", async () => {
    expect((await call("GET", "/v1/balances", { key: null })).body).toMatchObject({ error: { message: "x-api-key header is required" } });
    expect((await call("POST", "/v1/payment", { key: "pgw_" + "A".repeat(43), json: createBody() })).body).toMatchObject({ error: { message: "invalid api key" } });
  });

  it("answers 400, 404, 412, 413, 415 and 422 with the error body", async () => {
    const invalid = await call("POST", "/v1/payout", { json: createBody({ amount: "-1", number: "123" }) });
    expect(invalid.status).toBe(400);
    expect((await call("POST", "/v1/get_operation_state", { json: { operation_id: "00000000-0000-4000-8000-000000000000" } })).status).toBe(404);
    expect((await call("POST", "/v1/get_operation_state", { json: {} })).status).toBe(400);
    const body = createBody();
    await call("POST", "/v1/payment", { json: body });
    expect((await call("POST", "/v1/payment", { json: { ...body, amount: "1501.00" } })).status).toBe(412);
    expect((await call("POST", "/v1/payment", { json: createBody({ client_id: "x".repeat(70 * 1024) }) })).status).toBe(413);
    expect((await call("POST", "/v1/payment", { headers: { "content-type": "text/plain" }, body: JSON.stringify(createBody()) })).status).toBe(415);
    const poor = await createShopWithKey(stack);
    expect((await call("POST", "/v1/payout", { key: poor.apiKey, json: cardPayout() })).status).toBe(422);
  });

  it("answers 429 with Retry-After once a key's burst is spent", async () => {
    const limited = await createShopWithKey(stack, { rate_limit_rps: 1 });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await call("GET", "/v1/balances", { key: limited.apiKey })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });

  it("answers 429 without RateLimit headers once an address's budget for requests without a valid key is spent", async () => {
    // Keys of the right shape that no shop holds: each must be looked up, which is what the budget pays for.
    const madeUp = () => `pgw_${randomBytes(32).toString("base64url")}`;
    const answers = await Promise.all(Array.from({ length: 12 }, () => call("GET", "/v1/balances", { key: madeUp() })));
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0].body).toMatchObject({ error: { code: "rate_limited", message: "too many requests without a valid api key from this address" } });
    expect(limited[0].headers["ratelimit-limit"]).toBeUndefined();
    // The budget refills (2 a second): later tests find it as they would have.
    expect((await pollUntil(() => call("GET", "/v1/balances", { key: madeUp() }), (res) => res.status === 401, 10_000)).status).toBe(401);
  });
});

describe("webhooks", () => {
  it("delivers signed webhooks whose headers and body conform", async () => {
    // By now the shop has payments completed, cancelled and awaiting confirmation.
    const seen = await pollUntil(
      async () => new Set(receiver.verified.map((r) => r.json.type)),
      (types) => ["operation.completed", "operation.cancelled", "operation.awaiting_confirmation"].every((t) => types.has(t)),
      15_000,
    );
    expect([...seen]).toEqual(expect.arrayContaining(["operation.completed", "operation.cancelled", "operation.awaiting_confirmation"]));
    for (const hook of receiver.verified) {
      checker.checkWebhook("operation-status", { "webhook-id": hook.webhookId, "webhook-timestamp": hook.timestamp, "webhook-signature": hook.signature }, hook.json);
    }
  });
});

describe("outage", () => {
  it("answers 503 on /readyz, /healthz and the API while the operations service is down", async () => {
    const operations = stack.services.operations;
    await operations.stop();
    operations.stop = async () => undefined; // already stopped: the stack's teardown must not stop it twice
    const ready = await pollUntil(() => call("GET", "/readyz", { key: null }), (res) => res.status === 503);
    expect(ready.headers["x-failing-checks"]).toContain("operations");
    expect((await call("GET", "/healthz", { key: null })).status).toBe(503);
    const res = await call("POST", "/v1/get_operation_state", { json: { merchant_operation_id: "any" } });
    expect(res).toMatchObject({ status: 503, body: { error: { code: "unavailable" } } });
  });
});

it("exercised every operation and webhook of the document", () => {
  expect([...checker.exercised].sort()).toEqual(checker.documented().sort());
});
