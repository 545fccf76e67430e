import { Money } from "@pgw/contracts";
import { balanceRows, currentMinus, exceedsOverdraft, positionsOf, type AccountReading } from "./balances";

describe("balance rows", () => {
  it("answers one zero row per supported currency for a shop without accounts", () => {
    expect(balanceRows([])).toEqual([
      { currency: "RUB", balance: "0.00", currentMinus: "0.00", reserved: "0.00" },
      { currency: "USDT", balance: "0.000000", currentMinus: "0.000000", reserved: "0.000000" },
    ]);
  });

  it.each([
    ["100.00", "0.00", "0.00"],
    ["-30.00", "50.00", "0.00"],
    ["-80.00", "50.00", "30.00"],
    ["-0.01", "0.00", "0.01"],
  ])("current_minus of balance %s with reserved %s is %s", (balance, reserved, expected) => {
    expect(currentMinus(new Money(balance), new Money(reserved)).toFixed(2)).toBe(expected);
  });

  it("formats each currency at its own scale", () => {
    const [rub, usdt] = balanceRows([
      { currency: "RUB", available: new Money("10.1"), reserved: new Money("0") },
      { currency: "USDT", available: new Money("-1.5"), reserved: new Money("0.25") },
    ]);
    expect(rub.balance).toBe("10.10");
    expect(usdt).toEqual({ currency: "USDT", balance: "-1.500000", currentMinus: "1.250000", reserved: "0.250000" });
  });
});

describe("positions from account readings", () => {
  const reading = (kind: "available" | "reserved", currency: string, balance: string, journal = balance): AccountReading => ({
    kind,
    currency,
    balance: new Money(balance),
    journal: new Money(journal),
  });

  it("answers positions when every balance equals its journal", () => {
    const { positions, inconsistencies } = positionsOf([reading("available", "RUB", "-5.00"), reading("reserved", "RUB", "7.5")]);
    expect(inconsistencies).toEqual([]);
    expect(balanceRows(positions)[0]).toEqual({ currency: "RUB", balance: "-5.00", currentMinus: "0.00", reserved: "7.50" });
  });

  it("reports a balance that differs from its journal, and a negative reserve", () => {
    const { inconsistencies } = positionsOf([reading("available", "RUB", "10.00", "9.99"), reading("reserved", "USDT", "-0.000001")]);
    expect(inconsistencies).toEqual([
      { kind: "available", currency: "RUB", balance: "10", journal: "9.99", issue: "balance_differs_from_journal" },
      { kind: "reserved", currency: "USDT", balance: "-0.000001", journal: "-0.000001", issue: "negative_reserved" },
    ]);
  });
});

describe("overdraft limit", () => {
  it.each([
    ["100.00", "100.00", "0", false],
    ["100.00", "100.01", "0", true],
    ["0.00", "50.00", "50.00", false],
    ["0.00", "50.01", "50.00", true],
    ["-10.00", "0.01", "10.00", true],
  ])("available %s, total %s, limit %s: refused = %s", (available, total, limit, refused) => {
    expect(exceedsOverdraft(new Money(available), new Money(total), new Money(limit))).toBe(refused);
  });
});
