import { AppError, figuresByTariff, Money, quote, quoteFigures, tariffFields, tariffOf, type Currency, type OperationKind, type Tariff } from "@pgw/contracts";

const tariff = (percent: string, fixed = "0", minimum = "0"): Tariff => ({ percent: new Money(percent), fixed: new Money(fixed), minimum: new Money(minimum) });
const PAYMENT = tariff("2.5");
const PAYOUT = tariff("1.5");

type Row = [OperationKind, Tariff, string, Currency, Currency, string | undefined, string, string, string];

describe("quote", () => {
  // type, tariff, amount, currency, settlement currency, fx_rate → recorded, commission, settlement
  it.each<Row>([
    ["payment", PAYMENT, "100.00", "RUB", "RUB", undefined, "100", "2.5", "97.5"],
    ["payout", PAYOUT, "100.00", "RUB", "RUB", undefined, "100", "1.5", "101.5"],
    // half-even at RUB's 2 places: 0.025 → 0.02, 0.075 → 0.08, 0.005 → 0.00, 0.015 → 0.02, 0.045 → 0.04
    ["payment", PAYMENT, "1.00", "RUB", "RUB", undefined, "1", "0.02", "0.98"],
    ["payment", PAYMENT, "3.00", "RUB", "RUB", undefined, "3", "0.08", "2.92"],
    ["payment", PAYMENT, "0.20", "RUB", "RUB", undefined, "0.2", "0", "0.2"],
    ["payment", PAYMENT, "0.60", "RUB", "RUB", undefined, "0.6", "0.02", "0.58"],
    ["payout", PAYOUT, "1.00", "RUB", "RUB", undefined, "1", "0.02", "1.02"],
    ["payout", PAYOUT, "3.00", "RUB", "RUB", undefined, "3", "0.04", "3.04"],
    // half-even at USDT's 6 places: 0.0000005 → 0, 0.0000015 → 0.000002, 0.0000025 → 0.000002
    ["payment", PAYMENT, "0.00002", "USDT", "USDT", undefined, "0.00002", "0", "0.00002"],
    ["payment", PAYMENT, "0.00006", "USDT", "USDT", undefined, "0.00006", "0.000002", "0.000058"],
    ["payment", PAYMENT, "0.0001", "USDT", "USDT", undefined, "0.0001", "0.000002", "0.000098"],
    // conversion RUB → USDT with known rates
    ["payment", PAYMENT, "1000.00", "RUB", "USDT", "0.0108", "10.8", "0.27", "10.53"],
    ["payment", PAYMENT, "1000.00", "RUB", "USDT", "0.010869565", "10.869565", "0.271739", "10.597826"],
    ["payout", PAYOUT, "1000.00", "RUB", "USDT", "0.010869565", "10.869565", "0.163043", "11.032608"],
    // conversion rounding exactly at the half: 0.0123455 → 0.012346 (5 odd, up), 0.0123445 → 0.012344 (4 even, stays)
    ["payment", tariff("0"), "1.00", "RUB", "USDT", "0.0123455", "0.012346", "0", "0.012346"],
    ["payment", tariff("0"), "1.00", "RUB", "USDT", "0.0123445", "0.012344", "0", "0.012344"],
    ["payment", tariff("0"), "2.00", "RUB", "USDT", "0.00617225", "0.012344", "0", "0.012344"],
    // USDT → RUB: 92.345 → 92.34, 92.355 → 92.36
    ["payout", tariff("0"), "1", "USDT", "RUB", "92.345", "92.34", "0", "92.34"],
    ["payout", tariff("0"), "1", "USDT", "RUB", "92.355", "92.36", "0", "92.36"],
    // minimum and fixed parts
    ["payout", tariff("1", "0", "10"), "100.00", "RUB", "RUB", undefined, "100", "10", "110"],
    ["payout", tariff("1", "0", "10"), "2000.00", "RUB", "RUB", undefined, "2000", "20", "2020"],
    ["payout", tariff("1.5", "15"), "1000.00", "RUB", "RUB", undefined, "1000", "30", "1030"],
    ["payment", tariff("1", "0", "1.5"), "10.00", "USDT", "USDT", undefined, "10", "1.5", "8.5"],
    // a payment's commission never exceeds the payment
    ["payment", tariff("1", "0", "10"), "5.00", "RUB", "RUB", undefined, "5", "5", "0"],
  ])("%s %#: %s %s→%s at %s", (type, t, amount, currency, settlementCurrency, rate, recorded, commission, settlement) => {
    const q = quote({ type, tariff: t, amount: new Money(amount), currency, settlementCurrency, fxRate: rate === undefined ? undefined : new Money(rate) });
    expect({ recorded: q.recorded.toFixed(), commission: q.commission.toFixed(), settlement: q.settlement.toFixed(), currency: q.settlementCurrency }).toEqual({
      recorded,
      commission,
      settlement,
      currency: settlementCurrency,
    });
  });

  it("refuses a conversion without a rate and a rate other than 1 without conversion", () => {
    const base = { type: "payment" as const, tariff: PAYMENT, amount: new Money("10") };
    expect(() => quote({ ...base, currency: "RUB", settlementCurrency: "USDT" })).toThrow(AppError);
    expect(() => quote({ ...base, currency: "RUB", settlementCurrency: "RUB", fxRate: new Money("0.5") })).toThrow(/fx_rate/);
    expect(quote({ ...base, currency: "RUB", settlementCurrency: "RUB", fxRate: new Money("1") }).recorded.toFixed()).toBe("10");
  });
});

describe("a tariff on the wire", () => {
  it("comes back as the same tariff, and quotes the same figures", () => {
    const t = tariff("2.5", "0.000001", "15.5");
    const wire = tariffFields(t);
    expect(wire).toEqual({ percent: "2.5", fixed: "0.000001", minimum: "15.5" });
    const back = tariffOf(wire)!;
    const input = { type: "payment" as const, amount: new Money("1234.56"), currency: "RUB" as const, settlementCurrency: "USDT" as const, fxRate: new Money("0.010869565") };
    expect(quoteFigures(quote({ ...input, tariff: back }))).toEqual(quoteFigures(quote({ ...input, tariff: t })));
  });

  it.each([undefined, {}, { percent: "2.5", fixed: "0" }, { percent: "", fixed: "0", minimum: "0" }, { percent: "1e3", fixed: "0", minimum: "0" }])("is absent when incomplete or malformed: %j", (wire) => {
    expect(tariffOf(wire)).toBeNull();
  });

  it("formats the figures at the settlement currency's scale", () => {
    const q = quote({ type: "payout", tariff: PAYOUT, amount: new Money("100"), currency: "RUB", settlementCurrency: "RUB" });
    expect(quoteFigures(q)).toEqual({ recordedAmount: "100.00", commissionAmount: "1.50", settlementAmount: "101.50", settlementCurrency: "RUB" });
  });

  it("gives the same figures for currencies as text, and none for a currency no tariff settles", () => {
    const input = { type: "payout" as const, tariff: PAYOUT, amount: new Money("100") };
    expect(figuresByTariff({ ...input, currency: "RUB", settlementCurrency: "RUB" })).toEqual(quoteFigures(quote({ ...input, currency: "RUB", settlementCurrency: "RUB" })));
    expect(figuresByTariff({ ...input, currency: "XXX", settlementCurrency: "RUB" })).toBeNull();
    expect(figuresByTariff({ ...input, currency: "RUB", settlementCurrency: "rub" })).toBeNull();
  });
});
