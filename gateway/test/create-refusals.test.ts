/**
 * Creates that can never succeed as asked (no route for the method or currency, an amount outside
 * every route's limits, no FX rate for a conversion) are the request's fault: 400 naming the field,
 * never a 503 to retry on; nothing stays created or reserved, and the key can be used again.
 * (The 503 kept for providers that decline or do not answer: payments.test.ts.)
 */
import { merchantClient, newMoid } from "../../test/support/merchant";
import { admin, createShopWithKey, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;

beforeAll(async () => {
  // Route changes take effect at once (no cache), so a test can change routes and retry at once.
  stack = await startStack({ env: { routing: { ROUTES_CACHE_MS: "0" } } });
}, 120_000);
afterAll(() => stack?.stop());

const routingDb = () => stack.services.routing.db;
const createBody = (extra: Record<string, unknown> = {}) => ({
  merchant_operation_id: newMoid("refused"),
  client_id: "client-1",
  method: "WT_RUB_C2C",
  amount: "1500.00",
  currency: "RUB",
  number: "4111111111111111",
  ...extra,
});
const operationsOf = (shopId: string) => stack.services.operations.db.operation.count({ where: { shopId } });
/** The answer as a merchant reads it: status, error code and details, and whether it says when to retry. */
const refusalOf = (res: { status: number; headers: Record<string, unknown>; body: any }) => ({
  status: res.status,
  code: res.body.error?.code,
  details: res.body.error?.details,
  retryAfter: res.headers["retry-after"],
});
const badRequest = (field: string, issue: string) => ({ status: 400, code: "validation_error", details: [{ field, issue }], retryAfter: undefined });

/** Runs `body` with the routes matching `where` removed, putting them back after (or when `body` calls restore). */
async function withRoutesRemoved(where: { type: string; method: string; currency?: string }, body: (restore: () => Promise<void>) => Promise<void>) {
  const removed = await routingDb().route.findMany({ where });
  expect(removed.length).toBeGreaterThan(0);
  await routingDb().route.deleteMany({ where });
  let restored = false;
  const restore = async () => {
    if (!restored) await routingDb().route.createMany({ data: removed });
    restored = true;
  };
  try {
    await body(restore);
  } finally {
    await restore();
  }
}

/** The shop's balance row in `currency`. */
async function balanceOf(client: ReturnType<typeof merchantClient>, currency: string) {
  return (await client.get("/v1/balances")).body.balances.find((b: { currency: string }) => b.currency === currency);
}

describe("a create no route can carry", () => {
  it("refuses an amount outside every route's limits with 400 naming amount and the range, creating nothing; the key serves once the limits allow it", async () => {
    const shop = await createShopWithKey(stack);
    const m = merchantClient(stack, shop.apiKey);
    const range = badRequest("amount", "must be between 1.00 and 1000000.00 for this method and currency");
    for (const create of [m.payment, m.paymentLink]) {
      for (const amount of ["0.50", "1000000.01"]) {
        const body = createBody({ amount });
        expect({ amount, ...refusalOf(await create(body)) }).toEqual({ amount, ...range });
        expect((await m.state({ merchant_operation_id: body.merchant_operation_id })).status).toBe(404);
      }
    }
    expect(await operationsOf(shop.shopId)).toBe(0);

    // The same key again once the routes take the amount: the refusal held nothing.
    const body = createBody({ amount: "0.50" });
    expect(refusalOf(await m.payment(body))).toEqual(range);
    const where = { type: "payment", method: "WT_RUB_C2C", currency: "RUB", settlementCurrency: "RUB" };
    await routingDb().route.updateMany({ where, data: { minAmount: "0.10" } });
    try {
      const created = await m.payment(body);
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ status: "pending", expected_amount: "0.50" });
    } finally {
      await routingDb().route.updateMany({ where, data: { minAmount: "1.00" } });
    }
  });

  it("refuses a payout above every route's limit with 400 naming amount whatever the balance, never insufficient_balance; one within the limits but not covered is 422", async () => {
    const shop = await createShopWithKey(stack);
    const m = merchantClient(stack, shop.apiKey);
    const empty = await balanceOf(m, "RUB");
    const range = badRequest("amount", "must be between 1.00 and 1000000.00 for this method and currency");
    // Nothing on the balance: the limit is what makes these impossible, so that is the answer.
    for (const amount of ["1000000.01", "99999999.99"]) expect({ amount, ...refusalOf(await m.payout(createBody({ amount }))) }).toEqual({ amount, ...range });
    // Within the limits, the balance is what stands in the way.
    const uncovered = await m.payout(createBody({ amount: "1000.00" }));
    expect([uncovered.status, uncovered.body.error.code]).toEqual([422, "insufficient_balance"]);
    expect(await balanceOf(m, "RUB")).toEqual(empty);
    expect(await operationsOf(shop.shopId)).toBe(0);
  });

  it("refuses a currency the method is not routed in with 400 naming currency; the key serves once a route is set up", async () => {
    const shop = await createShopWithKey(stack);
    const m = merchantClient(stack, shop.apiKey);
    const body = createBody({ method: "WT_RUB_PHONE", currency: "USDT" });
    await withRoutesRemoved({ type: "payment", method: "WT_RUB_PHONE", currency: "USDT" }, async (restore) => {
      expect(refusalOf(await m.payment(body))).toEqual(badRequest("currency", "is not available for WT_RUB_PHONE payments of a shop settling in RUB"));
      expect(await operationsOf(shop.shopId)).toBe(0);
      await restore();
      const created = await m.payment(body);
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ status: "pending", currency: "USDT", expected_amount: "1500.00", settlement_currency: "RUB" });
    });
  });

  it("refuses a payout by a method no payout route serves with 400 naming method, its reserve returned; the key serves once a route is set up", async () => {
    const shop = await createShopWithKey(stack);
    const m = merchantClient(stack, shop.apiKey);
    expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "500.00", reason: "prefunding" })).status).toBe(201);
    const funded = { currency: "RUB", balance: "500.00", current_minus: "0.00", reserved: "0.00" };
    const body = createBody({ method: "WT_RUB_PHONE", number: "+79161234567", bankname: "sberbank", amount: "100.00" });
    await withRoutesRemoved({ type: "payout", method: "WT_RUB_PHONE" }, async (restore) => {
      expect(refusalOf(await m.payout(body))).toEqual(badRequest("method", "is not available for payouts"));
      // The reserve the payout took before routing (docs/architecture.md, Creating an operation) is back before the answer.
      expect(await balanceOf(m, "RUB")).toEqual(funded);
      expect(await operationsOf(shop.shopId)).toBe(0);
      await restore();
      const created = await m.payout(body);
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ type: "payout", status: "pending", expected_amount: "100.00" });
      const total = created.body.settlement_amount;
      expect(await balanceOf(m, "RUB")).toEqual({ ...funded, balance: (500 - Number(total)).toFixed(2), reserved: total });
    });
  });

  it("refuses a conversion without an FX rate with 400 naming currency, for payments and payouts alike, reserving nothing; the keys serve once a rate is configured", async () => {
    const shop = await createShopWithKey(stack, { settlement_currency: "USDT" });
    const m = merchantClient(stack, shop.apiKey);
    expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "USDT", amount: "100.00", reason: "prefunding" })).status).toBe(201);
    const funded = { currency: "USDT", balance: "100.000000", current_minus: "0.000000", reserved: "0.000000" };
    expect(await balanceOf(m, "USDT")).toEqual(funded);
    const payment = createBody();
    const payout = createBody({ amount: "100.00" });
    const pair = { baseCurrency: "RUB", quoteCurrency: "USDT" };
    const rates = await routingDb().fxRate.findMany({ where: pair });
    expect(rates.length).toBeGreaterThan(0);
    await routingDb().fxRate.deleteMany({ where: pair });
    try {
      const noRate = badRequest("currency", "cannot be converted to this shop's settlement currency (USDT): no exchange rate is configured");
      expect(refusalOf(await m.payment(payment))).toEqual(noRate);
      expect(refusalOf(await m.payout(payout))).toEqual(noRate);
      expect(await balanceOf(m, "USDT")).toEqual(funded);
      expect(await operationsOf(shop.shopId)).toBe(0);
    } finally {
      await routingDb().fxRate.createMany({ data: rates });
    }
    expect((await m.payment(payment)).body).toMatchObject({ status: "pending", settlement_currency: "USDT", fx_rate: expect.any(String) });
    expect((await m.payout(payout)).body).toMatchObject({ type: "payout", status: "pending", settlement_currency: "USDT", fx_rate: expect.any(String) });
  });

  it("answers 503 no_provider_available with Retry-After, not 400, while the only fitting route's provider is switched off", async () => {
    const shop = await createShopWithKey(stack);
    const m = merchantClient(stack, shop.apiKey);
    const provider = await routingDb().provider.findFirstOrThrow({ where: { code: "sandbox" } });
    await routingDb().provider.update({ where: { id: provider.id }, data: { enabled: false } });
    try {
      const body = createBody();
      const refused = await m.payment(body);
      expect(refusalOf(refused)).toMatchObject({ status: 503, code: "no_provider_available", retryAfter: expect.any(String) });
      expect(await operationsOf(shop.shopId)).toBe(0);
    } finally {
      await routingDb().provider.update({ where: { id: provider.id }, data: { enabled: true } });
    }
  });
});
