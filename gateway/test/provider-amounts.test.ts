/**
 * What a provider reports is booked exactly as it arrived, or refused: a completion that names no
 * amount, or one with more places than its currency holds, is answered 400, logged by routing as a
 * warning and changes nothing (never booked at the requested amount, never rounded); an amount in
 * USDT keeps its 6 places in the operation, the ledger and the webhook.
 */
import { startReceiver, type Receiver } from "../../services/notifier/test/support/receiver";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { captureAllLogLines } from "../../test/support/log-lines";
import { pollUntil } from "../../test/support/poll";
import { providerCallback } from "../../test/support/provider";
import { createShopWithKey, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
let receiver: Receiver;
let m: ReturnType<typeof merchantClient>;
/** A shop that settles in USDT: a USDT payment books there without conversion. */
let usdt: ReturnType<typeof merchantClient>;
let sandbox: ReturnType<typeof sandboxControl>;
/** Every unit's log lines; routing logs at warn, the others not at all. */
let logs: ReturnType<typeof captureAllLogLines>;

beforeAll(async () => {
  logs = captureAllLogLines();
  stack = await startStack({ env: { routing: { LOG_LEVEL: "warn" } } });
  receiver = await startReceiver();
  const [shop, usdtShop] = await Promise.all([createShopWithKey(stack), createShopWithKey(stack, { settlement_currency: "USDT", webhook_url: receiver.url })]);
  receiver.secrets = [usdtShop.webhookSecret];
  m = merchantClient(stack, shop.apiKey);
  usdt = merchantClient(stack, usdtShop.apiKey);
  sandbox = sandboxControl(stack);
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
  logs?.restore();
});

const payment = async (currency: string, amount: string, client = m) => {
  const created = await client.payment({ merchant_operation_id: newMoid("amounts"), client_id: "c", method: "WT_RUB_C2C", amount, currency });
  expect(created.body).toMatchObject({ status: "pending", currency });
  return created.body.operation_id as string;
};

/** The callbacks routing recorded for the operation (a refused one is not recorded). */
const recordedCallbacks = (operationId: string) => stack.services.routing.db.providerCallback.count({ where: { operationId } });

describe("a provider's completion", () => {
  it("without an amount is refused (400) with a warning in routing's log and leaves the payment pending; the provider's retry naming the amount completes it", async () => {
    const operationId = await payment("RUB", "1500.00");
    const refused = await providerCallback(stack, operationId, { status: "completed" });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "validation_error", message: expect.stringContaining("amount") });
    const warnings = await pollUntil(
      () => logs.lines().filter((l) => l.unit === "routing" && l.operationId === operationId),
      (lines) => lines.length > 0,
    );
    expect(warnings).toEqual([expect.objectContaining({ level: 40, provider: "sandbox", msg: "provider callback rejected: a completion with no amount to book" })]);
    expect(await recordedCallbacks(operationId)).toBe(0);
    expect((await m.state({ operation_id: operationId })).body).toMatchObject({ status: "pending", actual_amount: "0.00" });

    expect((await providerCallback(stack, operationId, { status: "completed", amount: "1499.99" })).status).toBe(200);
    expect((await m.waitForStatus(operationId, "completed")).body).toMatchObject({ actual_amount: "1499.99", expected_amount: "1500.00" });
    expect(await recordedCallbacks(operationId)).toBe(1);
  });

  it("with more places than its currency holds is refused, never rounded: the sandbox's callback is answered 400 and nothing completes", async () => {
    for (const [currency, paid] of [
      ["RUB", "100.005"],
      ["USDT", "7.1234567"],
    ]) {
      const operationId = await payment(currency, "100.00");
      const paidAnswer = await sandbox.pay(operationId, { amount: paid });
      expect(paidAnswer.status).toBe(200);
      expect(paidAnswer.body.callback).toEqual({ delivered: false, status_code: 400 });
      expect(await recordedCallbacks(operationId)).toBe(0);
      expect((await m.state({ operation_id: operationId })).body.status).toBe("pending");
    }
  });

  it("in USDT keeps USDT's 6 places in the operation, the balance and the webhook", async () => {
    const operationId = await payment("USDT", "7.12", usdt);
    expect((await sandbox.pay(operationId, { amount: "7.125" })).body.callback).toMatchObject({ delivered: true });
    const done = (await usdt.waitForStatus(operationId, "completed")).body;
    // 2.5 % commission of 7.125 is 0.178125: exact at 6 places.
    expect(done).toMatchObject({ expected_amount: "7.12", actual_amount: "7.125000", recorded_amount: "7.125000", commission_amount: "0.178125", settlement_amount: "6.946875" });
    expect(await usdt.waitForBalance("USDT", "6.946875")).toMatchObject({ balance: "6.946875", reserved: "0.000000" });
    const [hook] = await pollUntil(async () => receiver.verified.filter((r) => r.json.data.operation_id === operationId), (hooks) => hooks.length > 0, 15_000);
    expect(hook.json.data).toMatchObject({ status: "completed", actual_amount: "7.125000", settlement_amount: "6.946875", receipts: [{ amount: 7.125 }] });
  });
});
