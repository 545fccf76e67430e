import { completedPayment, CONVERTED_TO_USDT } from "../../test/fixtures";
import { GarbageEvent, planStatusChange, type OperationSnapshot } from "./status-event";

const SHOP = "7a1d2a43-0b8e-4d4c-9d3b-3f3b1a7c5e01";
const payment: OperationSnapshot = completedPayment(SHOP);
const OP = payment.operationId;
const converted: OperationSnapshot = { ...payment, ...CONVERTED_TO_USDT };
const payout: OperationSnapshot = { ...payment, type: "payout", settlementAmount: "1015.00", commissionAmount: "15.00" };

describe("status change plan", () => {
  it.each([
    ["payment", "pending"],
    ["payment", "cancelled"],
    ["payment", "declined"],
    ["payout", "pending"],
    ["payout", "manual_check"],
  ] as const)("%s → %s moves nothing", (type, status) => {
    expect(planStatusChange({ ...payment, type, status })).toEqual({ kind: "none" });
  });

  it.each(["declined", "expired", "cancelled"])("payout → %s releases the reserve", (status) => {
    expect(planStatusChange({ ...payout, status })).toEqual({ kind: "payout_released", operationId: OP });
  });

  it("plans captures with the snapshot's figures", () => {
    const plain = planStatusChange(payment);
    expect(plain.kind).toBe("payment_completed");
    const conv = planStatusChange(converted);
    expect(conv.kind === "payment_completed" && [conv.capture.recorded.toFixed(), conv.capture.settlementCurrency]).toEqual(["10.869565", "USDT"]);
    const out = planStatusChange(payout);
    expect(out.kind === "payout_completed" && out.capture.settlement.toFixed()).toBe("1015");
    // recorded fields may be absent without conversion
    expect(planStatusChange({ ...payment, recordedAmount: "1000.00", recordedCurrency: "RUB" }).kind).toBe("payment_completed");
  });

  it.each<[string, Partial<OperationSnapshot>]>([
    ["credited + commission ≠ recorded", { settlementAmount: "975.01" }],
    ["missing commission", { commissionAmount: undefined }],
    ["missing settlement amount", { settlementAmount: undefined }],
    ["zero actual amount", { actualAmount: "0.00" }],
    ["amount beyond scale", { actualAmount: "1000.001" }],
    ["unknown currency", { currency: "EUR" }],
    ["operation id not a uuid", { operationId: "op-1" }],
    ["unspecified type", { type: "unknown" }],
    ["recorded ≠ actual without conversion", { recordedAmount: "999.00" }],
    ["recorded currency ≠ settlement currency", { recordedCurrency: "USDT" }],
  ])("refuses a completed payment with %s", (_, change) => {
    expect(() => planStatusChange({ ...payment, ...change })).toThrow(GarbageEvent);
  });

  it.each<[string, Partial<OperationSnapshot>]>([
    ["no rate", { fxRate: undefined }],
    ["recorded ≠ actual × rate", { recordedAmount: "10.869566", settlementAmount: "10.597827" }],
    ["no recorded amount", { recordedAmount: undefined }],
  ])("refuses a converted completion with %s", (_, change) => {
    expect(() => planStatusChange({ ...converted, ...change })).toThrow(GarbageEvent);
  });

  it("refuses a payout whose charge is not amount + commission", () => {
    expect(() => planStatusChange({ ...payout, settlementAmount: "985.00" })).toThrow(/≠ recorded/);
  });
});
