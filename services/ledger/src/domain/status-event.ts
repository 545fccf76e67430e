/**
 * What the ledger does on an operation status change (pgw.operation.status_changed):
 *
 * | operation | new status                     | ledger action                               |
 * |-----------|--------------------------------|---------------------------------------------|
 * | payment   | completed                      | post the capture (source `complete:<id>`)    |
 * | payout    | completed                      | consume the reserve (source `complete:<id>`) |
 * | payout    | declined, expired, cancelled   | release the reserve (source `release:<id>`)  |
 * | any       | anything else                  | nothing                                      |
 *
 * The figures of a completion come from the snapshot, where operations put what this ledger's
 * own Quote answered at the transition; they are checked here, and an event whose figures do not
 * add up is refused as {@link GarbageEvent} (never posted, never retried).
 */
import { Money, roundTo, type Currency, type OperationKind, requireUuid } from "@pgw/contracts";
import type Decimal from "decimal.js";
import { FX_RATE_SCALE, parseAmount, parseCurrency, parseDecimal } from "./amounts";
import type { Capture } from "./flows";

/** The operation as the event shows it (wire strings, not yet trusted). */
export interface OperationSnapshot {
  operationId: string;
  shopId: string;
  type: OperationKind | "unknown";
  status: string;
  currency: string;
  actualAmount: string;
  fxRate?: string;
  settlementCurrency?: string;
  settlementAmount?: string;
  commissionAmount?: string;
  recordedAmount?: string;
  recordedCurrency?: string;
}

export type LedgerAction =
  | { kind: "none" }
  | { kind: "payment_completed"; operationId: string; capture: Capture }
  | { kind: "payout_completed"; operationId: string; capture: Capture }
  | { kind: "payout_released"; operationId: string };

/** An event the ledger can never post: missing or inconsistent figures. */
export class GarbageEvent extends Error {}

const RELEASING = new Set(["declined", "expired", "cancelled"]);

/** The ledger's action for a status change; throws {@link GarbageEvent} when the figures are unusable. */
export function planStatusChange(op: OperationSnapshot): LedgerAction {
  const moves = op.status === "completed" || (op.type === "payout" && RELEASING.has(op.status));
  if (!moves) return { kind: "none" };
  try {
    const operationId = requireUuid(op.operationId, "operation_id");
    if (op.type === "unknown") throw new GarbageEvent("operation type is unspecified");
    if (op.status !== "completed") return { kind: "payout_released", operationId };
    const capture = captureOf(op);
    return { kind: op.type === "payment" ? "payment_completed" : "payout_completed", operationId, capture };
  } catch (err) {
    if (err instanceof GarbageEvent) throw err;
    throw new GarbageEvent((err as Error).message);
  }
}

const required = (value: string | undefined, field: string): string => {
  if (value === undefined || value === "") throw new GarbageEvent(`${field} is missing`);
  return value;
};

/** The validated figures of a completed operation. */
function captureOf(op: OperationSnapshot): Capture {
  const shopId = requireUuid(op.shopId, "shop_id");
  const currency = parseCurrency(op.currency, "currency");
  const actual = parseAmount(op.actualAmount, "actual_amount", currency);
  const settlementCurrency: Currency = parseCurrency(op.settlementCurrency ?? op.recordedCurrency ?? op.currency, "settlement_currency");
  if (op.recordedCurrency !== undefined && op.recordedCurrency !== settlementCurrency) {
    throw new GarbageEvent(`recorded_currency ${op.recordedCurrency} differs from settlement_currency ${settlementCurrency}`);
  }
  const recorded = recordedOf(op, currency, actual, settlementCurrency);
  const commission = parseAmount(required(op.commissionAmount, "commission_amount"), "commission_amount", settlementCurrency, "non_negative");
  const settlement = parseAmount(required(op.settlementAmount, "settlement_amount"), "settlement_amount", settlementCurrency, "non_negative");
  const expected = op.type === "payment" ? recorded.minus(commission) : recorded.plus(commission);
  if (!settlement.eq(expected)) {
    const relation = op.type === "payment" ? "settlement + commission" : "settlement − commission";
    throw new GarbageEvent(`${relation} ≠ recorded (${settlement.toFixed()}, ${commission.toFixed()}, ${recorded.toFixed()})`);
  }
  return { shopId, currency, actual, settlementCurrency, recorded, commission, settlement };
}

/** recorded_amount: actual × fx_rate with conversion (checked against the rate), else the actual amount. */
function recordedOf(op: OperationSnapshot, currency: Currency, actual: Decimal, settlementCurrency: Currency): Decimal {
  if (currency === settlementCurrency) {
    const recorded = op.recordedAmount === undefined ? actual : parseAmount(op.recordedAmount, "recorded_amount", currency);
    if (!recorded.eq(actual)) throw new GarbageEvent(`recorded_amount ${recorded.toFixed()} ≠ actual_amount without conversion`);
    return recorded;
  }
  const rate = parseDecimal(required(op.fxRate, "fx_rate"), "fx_rate", FX_RATE_SCALE);
  const recorded = parseAmount(required(op.recordedAmount, "recorded_amount"), "recorded_amount", settlementCurrency);
  const expected = roundTo(new Money(actual).times(rate), settlementCurrency);
  if (!recorded.eq(expected)) throw new GarbageEvent(`recorded_amount ${recorded.toFixed()} ≠ actual × fx_rate = ${expected.toFixed()}`);
  return recorded;
}
