import { AppError } from "@pgw/kit";
import { ANONYMOUS_RECIPIENT, requestHash, validateCreate, type CreateInput } from "./create-rules";

const payment: CreateInput = { type: "payment", merchantOperationId: "m-1", clientId: "c-1", method: "WT_RUB_C2C", amount: "100.5", currency: "RUB" };
const fieldsOf = (input: CreateInput) => {
  try {
    validateCreate(input);
    return [];
  } catch (e) {
    return (e as AppError).details.map((d) => d.field).sort();
  }
};

describe("create request rules", () => {
  it("normalises a valid payment", () => {
    expect(validateCreate(payment)).toMatchObject({ amount: "100.50", method: "WT_RUB_C2C", destination: undefined });
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

  it("ignores destination fields on payments", () => {
    expect(validateCreate({ ...payment, number: "junk", bankname: "junk" }).destination).toBeUndefined();
  });

  it("hashes the same body the same way, however the amount is written", () => {
    expect(requestHash(payment)).toBe(requestHash({ ...payment, amount: "100.50" }));
    expect(requestHash(payment)).not.toBe(requestHash({ ...payment, amount: "100.51" }));
    expect(requestHash(payment)).not.toBe(requestHash({ ...payment, type: "payout" }));
    expect(requestHash(payment)).not.toBe(requestHash({ ...payment, name: "x" }));
  });
});
