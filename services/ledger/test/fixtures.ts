/** Status events as operations publishes them, and the operations used across the ledger's tests. Pure data. */
import { create } from "@bufbuild/protobuf";
import { OperationStatusChangedSchema, type OperationStatusChanged } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { OperationSchema, OperationType } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { randomUUID } from "node:crypto";
import type { OperationSnapshot } from "../src/domain/status-event";

/** An operation as an event shows it, plus the amount requested. */
export interface OperationFacts extends OperationSnapshot {
  type: "payment" | "payout";
  expected: string;
}

/** A completed RUB payment of 1000.00 with the default tariff (2.5 %). */
export function completedPayment(shopId: string, more: Partial<OperationFacts> = {}): OperationFacts {
  return {
    operationId: randomUUID(),
    shopId,
    type: "payment",
    status: "completed",
    currency: "RUB",
    expected: "1000.00",
    actualAmount: "1000.00",
    settlementCurrency: "RUB",
    settlementAmount: "975.00",
    commissionAmount: "25.00",
    ...more,
  };
}

/** The figures of 1000.00 RUB paid to a shop settling in USDT at 0.010869565, default tariff. */
export const CONVERTED_TO_USDT = {
  fxRate: "0.010869565",
  settlementCurrency: "USDT",
  recordedCurrency: "USDT",
  recordedAmount: "10.869565",
  settlementAmount: "10.597826",
  commissionAmount: "0.271739",
} as const;

/** An OperationStatusChanged with its event id. */
export interface StatusEvent {
  eventId: string;
  message: OperationStatusChanged;
}

/** A status event with a fresh event id carrying the operation snapshot. */
export function statusEvent(f: OperationFacts): StatusEvent {
  const eventId = randomUUID();
  const operation = create(OperationSchema, {
    operationId: f.operationId,
    shopId: f.shopId,
    type: f.type === "payment" ? OperationType.PAYMENT : OperationType.PAYOUT,
    status: f.status,
    method: "WT_RUB_C2C",
    expectedAmount: f.expected,
    actualAmount: f.actualAmount,
    currency: f.currency,
    fxRate: f.fxRate,
    fxSource: f.fxRate ? "test-rates" : undefined,
    settlementCurrency: f.settlementCurrency,
    settlementAmount: f.settlementAmount,
    commissionAmount: f.commissionAmount,
    recordedAmount: f.recordedAmount,
    recordedCurrency: f.recordedCurrency,
  });
  const message = create(OperationStatusChangedSchema, {
    eventId,
    operationId: f.operationId,
    shopId: f.shopId,
    merchantId: randomUUID(),
    previousStatus: "pending",
    status: f.status,
    operation,
    occurredAt: new Date().toISOString(),
  });
  return { eventId, message };
}
