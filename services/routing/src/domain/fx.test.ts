import { DEFAULT_FX_RATES } from "./default-routes";
import { formatRate, fxQuote, isValidRate } from "./fx";

describe("fx quote math", () => {
  it.each([
    ["0.0108401084", "0.0108401084"],
    ["91.8500000000", "91.85"],
    ["0.01084010840", "0.0108401084"],
    ["0.00000000005", "0"],
    ["0.00000000015", "0.0000000002"],
    ["1", "1"],
  ])("formats %s as %s (≤ 10 places, half-even, no exponent)", (raw, want) => {
    expect(formatRate(raw)).toBe(want);
  });

  it("refuses a rate that is not a positive decimal", () => {
    expect(isValidRate("0")).toBe(false);
    expect(isValidRate("-1")).toBe(false);
    expect(isValidRate("abc")).toBe(false);
    expect(() => fxQuote("s", "0", "USDT")).toThrow(RangeError);
    expect(fxQuote("sandbox-fx", "91.85", "RUB")).toEqual({ source: "sandbox-fx", rate: "91.85", targetCurrency: "RUB" });
  });

  it("seeds believable rates with at most 10 places", () => {
    for (const r of DEFAULT_FX_RATES) {
      expect(isValidRate(r.rate)).toBe(true);
      expect(r.rate.split(".")[1]?.length ?? 0).toBeLessThanOrEqual(10);
    }
    const [toUsdt, toRub] = DEFAULT_FX_RATES;
    const roundTrip = Number(toUsdt.rate) * Number(toRub.rate);
    expect(roundTrip).toBeGreaterThan(0.98);
    expect(roundTrip).toBeLessThanOrEqual(1);
  });
});
