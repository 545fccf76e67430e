import { Money } from "@pgw/kit";
import { balanceRows, currentMinus } from "./balances";

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
