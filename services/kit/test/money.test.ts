import { capturedAmount, formatAmount, formatRequestAmount, Money, parseCreateAmount, parseRequestAmount, roundTo } from "../src/money";

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
  it("books a provider's amount at 2 places, half-even, and finds nothing to book in zero or garbage", () => {
    expect(["9.500000", "100", "7.125", "7.135", "0.006"].map(capturedAmount)).toEqual(["9.50", "100.00", "7.12", "7.14", "0.01"]);
    expect(["0", "0.00", "0.004", "0.005", "", "-1.00", "1e3", "abc"].map(capturedAmount)).toEqual(Array(8).fill(null));
  });
});
