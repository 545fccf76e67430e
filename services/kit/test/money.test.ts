import { capturedAmount, formatAmount, formatExact, formatRequestAmount, Money, parseCreateAmount, parseRequestAmount, roundTo } from "@pgw/contracts";

describe("request amounts", () => {
  it.each(["1", "0.01", "100.5", "100.50", "123456789012345678.99"])("accepts %s", (value) => {
    expect(parseRequestAmount(value)?.toFixed(2)).toBe(new Money(value).toFixed(2));
  });

  it.each(["0", "0.00", "-1", "1.001", "01", "1e3", " 1", "1,00", "", ".5", "5.", "NaN", "1234567890123456789", 10, null])("refuses %p", (value) => {
    expect(parseRequestAmount(value)).toBeNull();
  });

  it("echoes with scale 2", () => {
    expect(formatRequestAmount(parseRequestAmount("100.5")!)).toBe("100.50");
  });
});

describe("create amounts", () => {
  it.each(["0.01", "0.50", "100.50", "1500.00", "123456789012345678.99"])("accepts %s, exactly as written", (value) => {
    expect(parseCreateAmount(value)?.toFixed(2)).toBe(value);
  });

  it.each(["100.5", "1500", "1e3", "1.234", "01.00", "00.50", "0.00", "-1.00", "+1.00", " 1.00", "1.00 ", "1,00", ".50", "1.", "1234567890123456789.00", "１.００", 1500, null])(
    "refuses %p, which parseRequestAmount may take",
    (value) => {
      expect(parseCreateAmount(value)).toBeNull();
    },
  );
});

describe("currency rounding", () => {
  it.each([
    ["0.125", "RUB", "0.12"],
    ["0.135", "RUB", "0.14"],
    ["-0.125", "RUB", "-0.12"],
    ["1.0000005", "USDT", "1.000000"],
    ["1.0000015", "USDT", "1.000002"],
  ] as const)("rounds %s half-even to %s scale: %s", (value, currency, expected) => {
    expect(formatAmount(value, currency)).toBe(expected);
    expect(roundTo(value, currency).toFixed()).toBe(new Money(expected).toFixed());
  });

  it("never goes through floating point", () => {
    expect(new Money("0.1").plus("0.2").toFixed()).toBe("0.3");
    expect(formatAmount(new Money("10.1"), "RUB")).toBe("10.10");
  });
});

describe("capturedAmount", () => {
  it("books a provider's amount at its currency's scale, never rounding a fact", () => {
    expect(["9.500000", "100", "7.12", "0.01"].map((a) => capturedAmount(a, "RUB"))).toEqual(["9.50", "100.00", "7.12", "0.01"]);
    expect(["7.125", "7.1250000", "0.000001", "100"].map((a) => capturedAmount(a, "USDT"))).toEqual(["7.125000", "7.125000", "0.000001", "100.000000"]);
  });

  it("finds nothing to book in more places than the currency holds, zero, garbage or an unknown currency", () => {
    expect(["7.125", "0.004", "0", "0.00", "", "-1.00", "1e3", "abc", "1234567890123456789"].map((a) => capturedAmount(a, "RUB"))).toEqual(Array(9).fill(null));
    expect(["7.1234567", "0.0000001"].map((a) => capturedAmount(a, "USDT"))).toEqual([null, null]);
    expect(capturedAmount("1.00", "EUR")).toBeNull();
  });
});

describe("formatExact", () => {
  it.each([
    ["1500", "1500.00"],
    ["0.5", "0.50"],
    ["7.125000", "7.125"],
    ["0.123456", "0.123456"],
  ])("formatExact(%s) = %s", (v, s) => expect(formatExact(v)).toBe(s));
});
