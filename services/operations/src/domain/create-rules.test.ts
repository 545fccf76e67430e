import { AppError } from "@pgw/contracts";
import { ANONYMOUS_RECIPIENT, requestHash, validateCreate, type CreateInput } from "./create-rules";

const payment: CreateInput = { type: "payment", merchantOperationId: "m-1", clientId: "c-1", method: "WT_RUB_C2C", amount: "100.50", currency: "RUB" };
const fieldsOf = (input: CreateInput) => {
  try {
    validateCreate(input);
    return [];
  } catch (e) {
    return (e as AppError).details.map((d) => d.field).sort();
  }
};

describe("create request rules", () => {
  it("keeps a valid payment's amount as sent", () => {
    expect(validateCreate(payment)).toMatchObject({ amount: "100.50", method: "WT_RUB_C2C", destination: undefined });
    expect(validateCreate({ ...payment, amount: "0.50" }).amount).toBe("0.50");
  });

  it("takes keys and client ids of any length (any non-empty string)", () => {
    expect(fieldsOf({ ...payment, merchantOperationId: "中".repeat(20_000), clientId: "k".repeat(20_000) })).toEqual([]);
  });

  it("takes an empty client_ip as none, for the rules and for the idempotency hash alike", () => {
    expect(validateCreate({ ...payment, clientIp: "" }).clientIp).toBeUndefined();
    expect(requestHash({ ...payment, clientIp: "" })).toBe(requestHash(payment));
    expect(fieldsOf({ ...payment, clientIp: " " })).toEqual(["client_ip"]);
  });

  it("names every bad field at once", () => {
    expect(fieldsOf({ ...payment, merchantOperationId: "", clientId: "", method: "CASH", amount: "1.001", currency: "EUR", clientIp: "nope" })).toEqual([
      "amount",
      "client_id",
      "client_ip",
      "currency",
      "merchant_operation_id",
      "method",
    ]);
  });

  it("names fields the caller received with another JSON type for that alone, beside every other bad field", () => {
    // client_id and number arrived as, say, a number and an array: their values are unset.
    const input: CreateInput = { ...payment, type: "payout", merchantOperationId: "", clientId: "", amount: "1.001", wronglyTyped: ["client_id", "number", "not_a_field"] };
    try {
      validateCreate(input);
      throw new Error("accepted");
    } catch (e) {
      expect((e as AppError).details).toEqual([
        { field: "merchant_operation_id", issue: "is required" },
        { field: "client_id", issue: "must be a string" },
        { field: "amount", issue: "must be a positive decimal string with exactly 2 decimal places, e.g. 100.50" },
        { field: "number", issue: "must be a string" },
      ]);
    }
    expect(fieldsOf({ ...payment, wronglyTyped: ["client_ip"] })).toEqual(["client_ip"]); // alone, it still refuses
  });

  it.each([
    [{ method: "WT_RUB_C2C", number: "4111111111111111" }, [], { number: "4111111111111111", name: ANONYMOUS_RECIPIENT }],
    [{ method: "WT_RUB_C2C", number: "4111111111111111", name: "  ", bankname: "junk" }, [], { number: "4111111111111111", name: ANONYMOUS_RECIPIENT }],
    [{ method: "WT_RUB_C2C", number: "4111111111111112" }, ["number"], undefined],
    [{ method: "WT_RUB_C2C" }, ["number"], undefined],
    [{ method: "WT_RUB_PHONE", number: "89161234567", bankname: "sberbank", name: "Ivan" }, [], { number: "+79161234567", name: "Ivan", bankname: "sberbank" }],
    [{ method: "WT_RUB_PHONE", number: "89161234567" }, ["bankname"], undefined],
    [{ method: "WT_RUB_PHONE", number: "x", bankname: "chase" }, ["bankname", "number"], undefined],
  ])("payout destination %j", (extra, badFields, destination) => {
    const input = { ...payment, type: "payout" as const, ...extra };
    expect(fieldsOf(input)).toEqual(badFields);
    if (badFields.length === 0) expect(validateCreate(input).destination).toEqual(destination);
  });

  it.each([
    ["9999999999999999999.99", "must have at most 18 digits before the decimal point"],
    ...["1.001", "0.00", "100.5", "1500", "1e3", "01.00"].map((amount) => [amount, "must be a positive decimal string with exactly 2 decimal places, e.g. 100.50"]),
    ["", "is required"],
  ])("says why the amount %j is refused", (amount, issue) => {
    expect(() => validateCreate({ ...payment, amount })).toThrow(expect.objectContaining({ details: [{ field: "amount", issue }] }));
  });

  it("accepts the largest amount the column holds", () => {
    expect(validateCreate({ ...payment, amount: "999999999999999999.99" }).amount).toBe("999999999999999999.99");
  });

  it("keeps a payout name's first 256 characters, never half of one", () => {
    const name = `${"a".repeat(255)}😀😀`;
    expect(validateCreate({ ...payment, type: "payout", number: "4111111111111111", name }).destination?.name).toBe(`${"a".repeat(255)}😀`);
  });

  it("ignores destination fields on payments", () => {
    expect(validateCreate({ ...payment, number: "junk", bankname: "junk" }).destination).toBeUndefined();
  });

  it("hashes the same body the same way and any change of it, the amount's included, another way", () => {
    expect(requestHash(payment)).toBe(requestHash({ ...payment }));
    expect(requestHash(payment)).not.toBe(requestHash({ ...payment, amount: "100.51" }));
    expect(requestHash(payment)).not.toBe(requestHash({ ...payment, type: "payout" }));
    expect(requestHash(payment)).not.toBe(requestHash({ ...payment, name: "x" }));
  });
});
