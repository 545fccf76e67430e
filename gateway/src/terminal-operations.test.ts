import { create } from "@bufbuild/protobuf";
import { OperationSchema } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { TerminalOperations } from "./terminal-operations";

const SHOP = "5b0a4c1e-2f3d-4e5a-8b6c-7d8e9f0a1b2c";
const OTHER_SHOP = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b";

let seq = 0;
const operation = (status: string) => {
  seq++;
  return create(OperationSchema, { operationId: `00000000-0000-4000-8000-${String(seq).padStart(12, "0")}`, merchantOperationId: `order-${seq}`, shopId: SHOP, status });
};
const byId = (op: { operationId: string }) => ({ case: "operationId" as const, value: op.operationId });
const byMerchantId = (op: { merchantOperationId: string }) => ({ case: "merchantOperationId" as const, value: op.merchantOperationId });

describe("TerminalOperations", () => {
  it.each(["completed", "cancelled", "declined", "expired"])("keeps a %s operation under both of its identifiers", (status) => {
    const kept = new TerminalOperations();
    const op = operation(status);
    kept.keep(SHOP, op);
    expect(kept.find(SHOP, byId(op))).toBe(op);
    expect(kept.find(SHOP, byMerchantId(op))).toBe(op);
  });

  it.each(["pending", "awaiting_confirmation", "manual_check"])("leaves a %s operation alone: it can still change", (status) => {
    const kept = new TerminalOperations();
    const op = operation(status);
    kept.keep(SHOP, op);
    expect(kept.find(SHOP, byId(op))).toBeUndefined();
    expect(kept.find(SHOP, byMerchantId(op))).toBeUndefined();
  });

  it("does not keep an operation whose merchant_operation_id is longer than the limit (it is read from operations each time)", () => {
    const kept = new TerminalOperations(100, 10);
    const long = { ...operation("completed"), merchantOperationId: "k".repeat(11) };
    const short = { ...operation("completed"), merchantOperationId: "k".repeat(10) };
    kept.keep(SHOP, long);
    kept.keep(SHOP, short);
    expect(kept.find(SHOP, byId(long))).toBeUndefined();
    expect(kept.find(SHOP, byMerchantId(long))).toBeUndefined();
    expect(kept.find(SHOP, byMerchantId(short))).toBe(short);
  });

  it("finds an operation only for the shop that read it", () => {
    const kept = new TerminalOperations();
    const op = operation("completed");
    kept.keep(SHOP, op);
    expect(kept.find(OTHER_SHOP, byId(op))).toBeUndefined();
    expect(kept.find(OTHER_SHOP, byMerchantId(op))).toBeUndefined();
  });

  it("does not mistake a merchant_operation_id for an operation_id of the same text", () => {
    const kept = new TerminalOperations();
    const op = operation("completed");
    kept.keep(SHOP, op);
    expect(kept.find(SHOP, { case: "operationId", value: op.merchantOperationId })).toBeUndefined();
    expect(kept.find(SHOP, { case: "merchantOperationId", value: op.operationId })).toBeUndefined();
  });

  it("lets the least recently read operation go first beyond its size", () => {
    const kept = new TerminalOperations(4); // two operations, two identifiers each
    const [first, second, third] = [operation("completed"), operation("declined"), operation("expired")];
    kept.keep(SHOP, first);
    kept.keep(SHOP, second);
    expect(kept.find(SHOP, byId(first))).toBe(first); // read: now more recent than `second`'s id
    kept.keep(SHOP, third);
    expect(kept.find(SHOP, byId(first))).toBe(first);
    expect(kept.find(SHOP, byId(second))).toBeUndefined();
    expect(kept.find(SHOP, byId(third))).toBe(third);
    expect(kept.find(SHOP, byMerchantId(third))).toBe(third);
  });
});
