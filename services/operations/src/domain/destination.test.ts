import { luhnValid, normalizeCardNumber, normalizePhone } from "./destination";

describe("payout destinations", () => {
  it.each([
    ["4111111111111111", "4111111111111111"],
    ["4111 1111 1111 1111", "4111111111111111"],
    ["2200000000000004", "2200000000000004"],
    ["4111111111111112", null],
    ["411111111111111", null],
    ["41111111111111111111", null],
    ["4111-1111-1111-1111", null],
    ["", null],
  ])("card %p → %p", (input, expected) => {
    expect(normalizeCardNumber(input)).toBe(expected);
  });

  it.each([
    ["+79161234567", "+79161234567"],
    ["89161234567", "+79161234567"],
    ["79161234567", "+79161234567"],
    ["+7 (916) 123-45-67", "+79161234567"],
    ["9161234567", null],
    ["+0123456789", null],
    ["phone", null],
  ])("phone %p → %p", (input, expected) => {
    expect(normalizePhone(input)).toBe(expected);
  });

  it("computes Luhn", () => {
    expect([luhnValid("79927398713"), luhnValid("79927398710")]).toEqual([true, false]);
  });
});
