import { randomUUID } from "node:crypto";
import { pollUntil } from "../../../test/support/poll";
import { completedPayment, CONVERTED_TO_USDT, statusEvent } from "./fixtures";
import { balancesOf, outcomeOf as codeOf, journalViolations, NO_VIOLATIONS, useTestLedger } from "./support";

const ledger = useTestLedger();

const adjust = (shopId: string, amount: string, currency = "RUB", idempotencyKey = randomUUID()) =>
  ledger.client.adjust({ shopId, currency, amount, reason: "test funding", actor: "test", idempotencyKey });
const reserve = (shopId: string, operationId: string, amount: string, overdraftLimit = "0", more: { currency?: string; settlementCurrency?: string; fxRate?: string } = {}) =>
  ledger.client.reserve({ shopId, operationId, method: "WT_RUB_C2C", amount, currency: "RUB", settlementCurrency: "RUB", overdraftLimit, ...more });
const row = (balance: string, currentMinus: string, reserved: string) => ({ balance, currentMinus, reserved });
const ZERO_USDT = row("0.000000", "0.000000", "0.000000");

describe("Quote", () => {
  it("answers the default tariffs' figures, with and without conversion", async () => {
    const shopId = randomUUID();
    const base = { shopId, method: "WT_RUB_C2C", currency: "RUB" };
    expect(await ledger.client.quote({ ...base, type: "payment", amount: "1000.00", settlementCurrency: "RUB" })).toMatchObject({
      commissionAmount: "25.00",
      settlementAmount: "975.00",
      settlementCurrency: "RUB",
      recordedAmount: "1000.00",
      appliedTariff: { percent: "2.5", fixed: "0", minimum: "0" },
    });
    expect(await ledger.client.quote({ ...base, type: "payout", amount: "1000.00", settlementCurrency: "USDT", fxRate: "0.010869565" })).toMatchObject({
      commissionAmount: "0.163043",
      settlementAmount: "11.032608",
      settlementCurrency: "USDT",
      recordedAmount: "10.869565",
      appliedTariff: { percent: "1.5", fixed: "0", minimum: "0" },
    });
  });

  it("quotes with a shop's own tariff soon after it is written, by any writer (Quote keeps tariffs in memory)", async () => {
    const shopId = randomUUID();
    const req = { shopId, type: "payment", method: "WT_RUB_C2C", amount: "1000.00", currency: "RUB", settlementCurrency: "RUB" };
    expect((await ledger.client.quote(req)).commissionAmount).toBe("25.00"); // the default, now cached
    expect((await ledger.client.quote(req)).commissionAmount).toBe("25.00");
    await ledger.db.insertInto("tariffs").values({ id: randomUUID(), shopId, type: "payment", method: "WT_RUB_C2C", currency: "RUB", percent: "1", fixed: "0", minimum: "0" }).execute();
    expect(await pollUntil(async () => (await ledger.client.quote(req)).commissionAmount, (c) => c === "10.00", 5000)).toBe("10.00");
    await ledger.db.updateTable("tariffs").set({ percent: "3", fixed: "0.5" }).where("shopId", "=", shopId).execute();
    const changed = await pollUntil(() => ledger.client.quote(req), (q) => q.commissionAmount === "30.50", 5000);
    // The tariff applied travels with the figures (operations settles the completion with it).
    expect(changed).toMatchObject({ commissionAmount: "30.50", appliedTariff: { percent: "3", fixed: "0.5", minimum: "0" } });
  });

  it.each([
    ["an unknown type", { type: "refund" }],
    ["a conversion without rate", { settlementCurrency: "USDT" }],
    ["an unknown method", { method: "WT_XYZ" }],
    ["an amount beyond the currency scale", { amount: "1.001" }],
    ["a float-looking amount", { amount: "1e3" }],
    ["a shop id that is no UUID", { shopId: "shop-1" }],
  ])("refuses %s with validation_error", async (_, change) => {
    const req = { shopId: randomUUID(), type: "payment", method: "WT_RUB_C2C", amount: "10.00", currency: "RUB", settlementCurrency: "RUB", ...change };
    expect(await codeOf(ledger.client.quote(req))).toBe("validation_error");
  });
});

describe("Reserve and ReleaseReserve", () => {
  it("moves available → reserved once per operation and back once on release", async () => {
    const shopId = randomUUID();
    const op = randomUUID();
    await adjust(shopId, "1000.00");
    const first = await reserve(shopId, op, "100.00");
    expect(first).toMatchObject({
      reservedAmount: "101.50",
      commissionAmount: "1.50",
      settlementAmount: "101.50",
      recordedAmount: "100.00",
      settlementCurrency: "RUB",
      appliedTariff: { percent: "1.5", fixed: "0", minimum: "0" },
    });
    expect((await balancesOf(ledger, shopId)).RUB).toEqual(row("898.50", "0.00", "101.50"));

    // a repeat answers the held reserve and moves nothing; one with other figures is a conflict
    expect(await reserve(shopId, op, "100.00")).toMatchObject({ reservedAmount: "101.50" });
    expect(await codeOf(reserve(shopId, op, "500.00"))).toBe("idempotency_conflict");
    expect((await balancesOf(ledger, shopId)).RUB).toEqual(row("898.50", "0.00", "101.50"));

    expect(await ledger.client.releaseReserve({ operationId: op })).toMatchObject({ released: true });
    expect(await ledger.client.releaseReserve({ operationId: op })).toMatchObject({ released: false });
    expect(await balancesOf(ledger, shopId)).toEqual({ RUB: row("1000.00", "0.00", "0.00"), USDT: ZERO_USDT });
    // Reserve again after the release: refused (it would answer figures no longer held), nothing moves
    expect(await codeOf(reserve(shopId, op, "100.00"))).toBe("invalid_state");
    expect((await balancesOf(ledger, shopId)).RUB).toEqual(row("1000.00", "0.00", "0.00"));
  });

  it("refuses with insufficient_balance below the overdraft limit and allows down to it", async () => {
    const shopId = randomUUID();
    await adjust(shopId, "1000.00");
    expect(await codeOf(reserve(shopId, randomUUID(), "2000.00"))).toBe("insufficient_balance");
    expect(await codeOf(reserve(shopId, randomUUID(), "2000.00", "1029.99"))).toBe("insufficient_balance");
    expect((await balancesOf(ledger, shopId)).RUB).toEqual(row("1000.00", "0.00", "0.00"));
    // 1000.00 − 2030.00 = −1030.00, exactly the limit
    await reserve(shopId, randomUUID(), "2000.00", "1030.00");
    expect((await balancesOf(ledger, shopId)).RUB).toEqual(row("-1030.00", "0.00", "2030.00"));
  });

  it("makes a late Reserve move nothing once its release came first", async () => {
    const shopId = randomUUID();
    const op = randomUUID();
    await adjust(shopId, "1000.00");
    expect(await ledger.client.releaseReserve({ operationId: op })).toMatchObject({ released: false });
    expect(await codeOf(reserve(shopId, op, "100.00"))).toBe("invalid_state");
    expect((await balancesOf(ledger, shopId)).RUB).toEqual(row("1000.00", "0.00", "0.00"));
  });

  it("reserves in the settlement currency with conversion", async () => {
    const shopId = randomUUID();
    await adjust(shopId, "20", "USDT");
    const res = await reserve(shopId, randomUUID(), "1000.00", "0", { settlementCurrency: "USDT", fxRate: "0.010869565" });
    expect(res).toMatchObject({ reservedAmount: "11.032608", settlementCurrency: "USDT" });
    expect((await balancesOf(ledger, shopId)).USDT).toEqual(row("8.967392", "0.000000", "11.032608"));
  });
});

describe("Adjust", () => {
  it("credits and debits available, idempotent by key, and refuses a reused key with other content", async () => {
    const shopId = randomUUID();
    const key = randomUUID();
    const a = await adjust(shopId, "10.50", "RUB", key);
    const again = await adjust(shopId, "10.50", "RUB", key);
    expect(again.entryId).toBe(a.entryId);
    expect(await codeOf(adjust(shopId, "10.51", "RUB", key))).toBe("idempotency_conflict");
    await adjust(shopId, "-30.00");
    expect((await balancesOf(ledger, shopId)).RUB).toEqual(row("-19.50", "19.50", "0.00"));
    for (const bad of ["0", "0.00", "1.001", "abc", ""]) expect(await codeOf(adjust(shopId, bad))).toBe("validation_error");
    expect(await codeOf(ledger.client.adjust({ shopId, currency: "RUB", amount: "1.00", reason: "  ", actor: "t", idempotencyKey: randomUUID() }))).toBe("validation_error");
  });
});

describe("status events", () => {
  const payment = completedPayment;

  it("credits a completed payment net of commission, and a partial capture by what was captured", async () => {
    const shopId = randomUUID();
    await ledger.deliver(statusEvent(payment(shopId)));
    // partial: 400.00 of 1000.00 captured, quoted again on the captured amount
    await ledger.deliver(statusEvent(payment(shopId, { actualAmount: "400.00", settlementAmount: "390.00", commissionAmount: "10.00" })));
    expect((await balancesOf(ledger, shopId)).RUB).toEqual(row("1365.00", "0.00", "0.00"));
    expect(await journalViolations(ledger.db)).toEqual(NO_VIOLATIONS);
  });

  it("credits a converted payment in the settlement currency and records both sides through fx_conversion", async () => {
    const shopId = randomUUID();
    const ev = payment(shopId, CONVERTED_TO_USDT);
    await ledger.deliver(statusEvent(ev));
    expect(await balancesOf(ledger, shopId)).toEqual({ RUB: row("0.00", "0.00", "0.00"), USDT: row("10.597826", "0.000000", "0.000000") });
    const postings = await ledger.db
      .selectFrom("postings as p")
      .innerJoin("accounts as a", "a.id", "p.accountId")
      .innerJoin("journalEntries as e", "e.id", "p.entryId")
      .select((eb) => ["a.kind", "p.currency", eb.cast<string>("p.amount", "text").as("amount")])
      .where("e.source", "=", `complete:${ev.operationId}`)
      .orderBy("p.id")
      .execute();
    expect(postings).toEqual([
      { kind: "provider_clearing", currency: "RUB", amount: "-1000.000000" },
      { kind: "fx_conversion", currency: "RUB", amount: "1000.000000" },
      { kind: "fx_conversion", currency: "USDT", amount: "-10.869565" },
      { kind: "available", currency: "USDT", amount: "10.597826" },
      { kind: "commission_revenue", currency: "USDT", amount: "0.271739" },
    ]);
  });

  it("consumes a payout's reserve on completion, returns the rest of a partial payout, releases on decline/expiry/cancel", async () => {
    const shopId = randomUUID();
    await adjust(shopId, "10000.00");
    const [full, partial, declined, expired, cancelled] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    for (const op of [full, partial, declined, expired, cancelled]) await reserve(shopId, op, "1000.00");
    expect((await balancesOf(ledger, shopId)).RUB).toEqual(row("4925.00", "0.00", "5075.00"));
    const payout = (operationId: string, status: string, more = {}) =>
      statusEvent({ operationId, shopId, type: "payout", status, currency: "RUB", expected: "1000.00", actualAmount: "0.00", settlementCurrency: "RUB", ...more });
    await ledger.deliver(payout(full, "completed", { actualAmount: "1000.00", settlementAmount: "1015.00", commissionAmount: "15.00" }));
    await ledger.deliver(payout(partial, "completed", { actualAmount: "600.00", settlementAmount: "609.00", commissionAmount: "9.00" }));
    await ledger.deliver(payout(declined, "declined"));
    await ledger.deliver(payout(expired, "expired"));
    await ledger.deliver(payout(cancelled, "cancelled"));
    // 10000 − 1015 − 609
    expect((await balancesOf(ledger, shopId)).RUB).toEqual(row("8376.00", "0.00", "0.00"));
    expect(await ledger.client.releaseReserve({ operationId: full })).toMatchObject({ released: false });
    expect(await journalViolations(ledger.db)).toEqual(NO_VIOLATIONS);
  });

  it("never posts an event whose figures do not add up, and keeps consuming", async () => {
    const shopId = randomUUID();
    const garbage = statusEvent(payment(shopId, { settlementAmount: "976.00" }));
    // the consumer handles one message at a time in stream order: once `good` is done, so is `garbage`
    await ledger.publish(garbage);
    await ledger.deliver(statusEvent(payment(shopId)));
    expect((await balancesOf(ledger, shopId)).RUB).toEqual(row("975.00", "0.00", "0.00"));
    const entries = await ledger.db.selectFrom("journalEntries").select("id").where("source", "=", `complete:${garbage.message.operationId}`).execute();
    expect(entries).toEqual([]);
  });
});
