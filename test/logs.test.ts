/**
 * What the units log through a whole payment and payout, at debug level, with tracing on: no line
 * holds the plaintext API key, a card number, the webhook signing secret, a webhook's body or the
 * admin token; every line of a request carries its trace id beside its request id; a merchant's
 * refused requests are answered and logged at info without a stack trace.
 */
import { recordSpans, type RecordedSpans } from "@pgw/kit/testing";
import { waitFor } from "../services/notifier/test/support/harness";
import { startReceiver, type Receiver } from "../services/notifier/test/support/receiver";
import { captureAllLogLines } from "./support/log-lines";
import { merchantClient, newMoid, sandboxControl } from "./support/merchant";
import { ADMIN_TOKEN, createShopWithKey, startStack } from "./support/stack";

const PAYOUT_CARD = "4242424242424242";
const UNITS = ["gateway", "operations", "routing", "ledger", "receipts", "notifier", "provider-sandbox"];

let recorded: RecordedSpans;
let receiver: Receiver;
let logs: ReturnType<typeof captureAllLogLines>;

beforeAll(async () => {
  recorded = recordSpans();
  logs = captureAllLogLines();
  receiver = await startReceiver();
});
afterAll(async () => {
  logs?.restore();
  await receiver?.close();
  await recorded?.stop();
});

it("logs a payment and a payout without secrets or card numbers, each request's lines with its trace id, refusals at info without a stack", async () => {
  const stack = await startStack({ observeEnv: (_unit, env) => ({ ...env, LOG_LEVEL: "debug" }) });
  let secrets: string[];
  const refused: string[] = [];
  try {
    const shop = await createShopWithKey(stack, { webhook_url: receiver.url });
    receiver.secrets = [shop.webhookSecret];
    const m = merchantClient(stack, shop.apiKey);
    const sandbox = sandboxControl(stack);
    const webhook = (id: string) => waitFor(() => receiver.verified.find((r) => r.json.data.operation_id === id && r.json.type === "operation.completed"), 15_000, `the completed webhook of ${id}`);

    const payment = await m.payment({ merchant_operation_id: newMoid("logs"), client_id: "client-1", method: "WT_RUB_C2C", amount: "1500.00", currency: "RUB" });
    expect(payment.status).toBe(200);
    await sandbox.pay(payment.body.operation_id, { amount: "1500.00" });
    const paid = await webhook(payment.body.operation_id);
    // Its first read asks receipts for the evidence (the completion itself no longer does), so receipts logs a request too.
    const read = await m.state({ operation_id: payment.body.operation_id });
    expect(read.body.receipt_evidence_status).toBe("complete");

    const payoutBody = { merchant_operation_id: newMoid("logs"), client_id: "client-1", method: "WT_RUB_C2C", amount: "100.00", currency: "RUB", number: PAYOUT_CARD };
    const overdrawn = await m.payout({ ...payoutBody, merchant_operation_id: newMoid("logs"), amount: "900000.00" });
    expect(overdrawn.body.error.code).toBe("insufficient_balance");
    const invalid = await m.payment({ merchant_operation_id: newMoid("logs"), client_id: "client-1", method: "WT_RUB_C2C", amount: "1.5", currency: "RUB" });
    expect(invalid.status).toBe(400);
    refused.push(String(overdrawn.headers["x-request-id"]), String(invalid.headers["x-request-id"]));
    const payout = await m.payout(payoutBody);
    expect(payout.status).toBe(200);
    await sandbox.settle(payout.body.operation_id);
    const settled = await webhook(payout.body.operation_id);
    secrets = [shop.apiKey, shop.webhookSecret, ADMIN_TOKEN, PAYOUT_CARD, payment.body.number, paid.body, settled.body, paid.signature];
    expect(payment.body.number).toMatch(/^\d{16,19}$/);
  } finally {
    await stack.stop();
  }
  // Every unit but the sandbox logs that it stopped, last: then its lines are all written (the sandbox's went out while the others stopped).
  const lines = await waitFor(() => (UNITS.filter((unit) => unit !== "provider-sandbox").every((unit) => logs.lines().some((l) => l.unit === unit && /stopped$/.test(l.msg))) ? logs.lines() : null), 5000, "every unit's last line");

  const text = lines.map((l) => JSON.stringify(l));
  for (const secret of secrets) expect(text.filter((line) => line.includes(secret))).toEqual([]);

  const ofRequests = lines.filter((l) => l.request_id !== undefined);
  expect(ofRequests.length).toBeGreaterThan(20);
  expect(ofRequests.filter((l) => !/^[0-9a-f]{32}$/.test(l.trace_id ?? ""))).toEqual([]);
  expect(UNITS.filter((unit) => !ofRequests.some((l) => l.unit === unit))).toEqual([]);

  for (const requestId of refused) {
    const ofRefusal = lines.filter((l) => l.request_id === requestId);
    expect(ofRefusal.map((l) => l.unit)).toContain("gateway");
    expect(ofRefusal.filter((l) => l.level > 30 || l.err !== undefined || JSON.stringify(l).includes("    at "))).toEqual([]);
  }
}, 120_000);
