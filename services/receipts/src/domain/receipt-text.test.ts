import { Money } from "@pgw/contracts";
import fc from "fast-check";
import { amountsIn, checkAmount, checkDestination, parseAmountToken, sameDestination, statedAmounts } from "./receipt-text";

describe("parseAmountToken reads the notations receipts use", () => {
  it.each([
    ["1500.00", "1500"],
    ["1500,00", "1500"],
    ["1 500,00", "1500"],
    ["1\u00a0500,00", "1500"],
    ["1\u202f500.50", "1500.5"],
    ["1,500.00", "1500"],
    ["1.500,00", "1500"],
    ["1'500.00", "1500"],
    ["12 345 678,90", "12345678.9"],
    ["15,5", "15.5"],
    ["700", "700"],
    ["1 50,00", null],
    ["1,5000.00", null],
  ])("%s", (token, expected) => {
    const parsed = parseAmountToken(token);
    expect(parsed === null ? null : parsed.toString()).toBe(expected);
  });

  it("round-trips any amount written with any separator style", () => {
    const styles: [string, string][] = [
      ["", "."],
      [" ", ","],
      ["\u00a0", ","],
      [",", "."],
      [".", ","],
    ];
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.constantFrom(...styles), (cents, [group, decimal]) => {
        const whole = (cents / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, group);
        const written = `${whole}${decimal}${(cents % 100n).toString().padStart(2, "0")}`;
        const found = amountsIn(`Amount: ${written} RUB`);
        return found.length === 1 && found[0].eq(new Money(cents.toString()).div(100));
      }),
    );
  });
});

describe("checkAmount", () => {
  const expected = new Money("1500.00");
  it.each([
    ["Amount: 1500.00 RUB", "match"],
    ["Сумма: 1 500,00 ₽", "match"],
    ["Total paid 1,500.00", "match"],
    ["Amount: 1400.00 RUB", "mismatch"],
    ["Amount: 15000.00 RUB", "mismatch"],
    ["Amount: 150.00 RUB\nFee: 1500.00", "mismatch"],
    ["Amount: 1500.00 RUB\nTotal: 1515.00", "match"],
    ["Payment of 1500.00 done", "match"],
    ["Payment done", "missing"],
    ["", "missing"],
  ])("%j → %s", (text, result) => {
    expect(checkAmount(text, expected)).toBe(result);
  });

  it("takes only the first number after a label (not the card number that follows)", () => {
    expect(statedAmounts("Amount: 1500.00 RUB Recipient: 4111 1111 1111 1111").map(String)).toEqual(["1500"]);
  });
});

describe("destination", () => {
  it.each([
    ["4111 1111 1111 1111", "4111111111111111", true],
    ["4111-1111-1111-1111", "4111111111111111", true],
    ["4111 11** **** 1111", "4111111111111111", true],
    ["**** **** **** 1111", "4111111111111111", true],
    ["**** **** **** 1112", "4111111111111111", false],
    ["4111 11** **** ****", "4111111111111111", false],
    ["+7 (900) 123-45-67", "+79001234567", true],
    ["8 900 123 45 67", "+79001234567", true],
    ["9001234567", "79001234567", true],
    ["+7 (900) 123-45-68", "+79001234567", false],
    ["5555555555554444", "4111111111111111", false],
  ])("%s designates %s: %s", (candidate, target, result) => {
    expect(sameDestination(candidate, target)).toBe(result);
  });

  it.each([
    ["Recipient: 4111111111111111", "match"],
    ["Получатель: карта 4111 11** **** 1111", "match"],
    ["Recipient: 5555555555554444", "mismatch"],
    ["Transfer to 4111111111111111 done", "match"],
    ["Transfer done", "missing"],
  ])("%j → %s", (text, result) => {
    expect(checkDestination(text, "4111111111111111")).toBe(result);
  });
});
