import { AppError, Money } from "@pgw/contracts";
import { quoteOfReserve, repeatRefusal, type PayoutReserve } from "./reserve";

const held: PayoutReserve = { shopId: "s1", currency: "RUB", amount: new Money("500.00"), commission: new Money("7.50"), status: "held" };
const codeOf = (e: AppError | null) => e?.code ?? null;

describe("payout reserve", () => {
  it("answers for the payout's quote: amount + commission held in the settlement currency", () => {
    const q = quoteOfReserve(held);
    expect([q.recorded.toFixed(2), q.commission.toFixed(2), q.settlement.toFixed(2), q.settlementCurrency]).toEqual(["500.00", "7.50", "507.50", "RUB"]);
  });

  it("lets a repeat with the same figures answer the held reserve, whatever the spelling of its amounts", () => {
    expect(repeatRefusal(held, { ...held, amount: new Money("500.000000"), commission: new Money("7.5") })).toBeNull();
  });

  it("refuses a repeat for another shop or with other figures as an idempotency conflict", () => {
    expect(codeOf(repeatRefusal(held, { ...held, shopId: "s2" }))).toBe("idempotency_conflict");
    expect(codeOf(repeatRefusal(held, { ...held, amount: new Money("500.01") }))).toBe("idempotency_conflict");
    expect(codeOf(repeatRefusal(held, { ...held, commission: new Money("7.51") }))).toBe("idempotency_conflict");
    expect(codeOf(repeatRefusal(held, { ...held, currency: "USDT" }))).toBe("idempotency_conflict");
  });

  it("refuses a Reserve after the release (tombstone) or once the reserve is no longer held", () => {
    expect(codeOf(repeatRefusal({ ...held, status: "void", shopId: "00000000-0000-0000-0000-000000000000" }, held))).toBe("invalid_state");
    expect(codeOf(repeatRefusal({ ...held, status: "released" }, held))).toBe("invalid_state");
    expect(codeOf(repeatRefusal({ ...held, status: "consumed" }, held))).toBe("invalid_state");
  });
});
