import { createHash } from "node:crypto";
import fc from "fast-check";
import { isLuhnValid, luhnCheckDigit, requisitesFor, SANDBOX_BANKS } from "./requisites";

const seedOf = (s: string) => createHash("sha256").update(s).digest();

describe("Luhn", () => {
  it.each([
    ["4111111111111111", true],
    ["4111111111111112", false],
    ["79927398713", true],
    ["79927398710", false],
    ["", false],
    ["41111111111a1111", false],
  ])("%s valid: %s", (number, valid) => expect(isLuhnValid(number)).toBe(valid));

  it("the check digit makes any payload valid", () => {
    fc.assert(fc.property(fc.stringMatching(/^\d{1,18}$/), (payload) => isLuhnValid(payload + luhnCheckDigit(payload))));
  });
});

describe("requisitesFor", () => {
  it("gives a Luhn-valid 16-digit card for WT_RUB_C2C", () => {
    fc.assert(
      fc.property(fc.uuid(), (id) => {
        const r = requisitesFor("WT_RUB_C2C", seedOf(id));
        return /^\d{16}$/.test(r.number) && isLuhnValid(r.number) && r.name.length > 0 && SANDBOX_BANKS.includes(r.bankname!);
      }),
    );
  });

  it("gives a +79 phone for WT_RUB_PHONE", () => {
    const r = requisitesFor("WT_RUB_PHONE", seedOf("x"));
    expect(r.number).toMatch(/^\+79\d{9}$/);
    expect(SANDBOX_BANKS).toContain(r.bankname);
  });

  it("is deterministic per seed", () => {
    expect(requisitesFor("WT_RUB_C2C", seedOf("a"))).toEqual(requisitesFor("WT_RUB_C2C", seedOf("a")));
    expect(requisitesFor("WT_RUB_C2C", seedOf("a")).number).not.toBe(requisitesFor("WT_RUB_C2C", seedOf("b")).number);
  });
});
