import { CURRENCY_SCALE, formatAmount, isCurrency, maskCardNumber, type Currency } from "@pgw/contracts";
import { type DataKeys } from "@pgw/kit/db";
import { OperationType } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { OperationSchema } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { findBank } from "../domain/banks";
import { METHODS, isMethod } from "../domain/methods";
import type { OperationRow } from "../store";

type Decimalish = { toFixed(dp?: number): string; isZero(): boolean };

/** An amount at its currency's scale (RUB 2, USDT 6); absent without both. */
const inCurrency = (amount: Decimalish | null, currency: string | null) =>
  amount && currency && isCurrency(currency) ? amount.toFixed(CURRENCY_SCALE[currency]) : undefined;

/**
 * Storage row → the operation as the API shows it, with every presence rule of docs/api.md,
 * Operation object, its sealed `number` opened with `keys` (and a card number `masked` to its first
 * six and last four digits, as internal teams see it). Route and provider identifiers never appear here.
 */
export function operationWire(row: OperationRow, keys: DataKeys, masked = false): MessageInitShape<typeof OperationSchema> {
  const number = row.number ? keys.read(row.number) : undefined;
  return { ...operationSnapshot(row), number: number && masked ? maskCardNumber(number) : number };
}

/**
 * The operation as status events carry it: as the API shows it, without `number`, since events
 * reach the NATS store in clear. The number travels beside it still sealed (events.ts
 * statusChangedEvent; docs/architecture.md, Secrets and card numbers).
 */
export function operationSnapshot(row: OperationRow): MessageInitShape<typeof OperationSchema> {
  const destinationCurrency = isMethod(row.method) ? METHODS[row.method].destinationCurrency : row.currency;
  const bank = row.bankname ? findBank(destinationCurrency, row.bankname) : undefined;
  const captured = !row.actualAmount.isZero();
  return {
    operationId: row.id,
    type: row.type === "payout" ? OperationType.PAYOUT : OperationType.PAYMENT,
    status: row.status,
    method: row.method,
    expectedAmount: row.expectedAmount.toFixed(2),
    // The fact as its source reported it, at the currency's scale: "0.00" in RUB until money moved.
    actualAmount: formatAmount(row.actualAmount, row.currency as Currency),
    currency: row.currency,
    fxSource: row.fxSource ?? undefined,
    fxRate: row.fxSource && row.fxRate ? row.fxRate.toFixed() : undefined,
    // A ledger fact exists only once money moved: never on a pending response.
    recordedCurrency: captured && row.recordedAmount ? (row.recordedCurrency ?? undefined) : undefined,
    recordedAmount: captured ? inCurrency(row.recordedAmount, row.recordedCurrency) : undefined,
    settlementAmount: inCurrency(row.settlementAmount, row.settlementCurrency),
    settlementCurrency: row.settlementAmount ? (row.settlementCurrency ?? undefined) : undefined,
    commissionAmount: inCurrency(row.commissionAmount, row.settlementCurrency),
    externalConfirmation: row.requiresReceipt ? { required: true, methods: ["receipt"] } : undefined,
    name: row.number ? (row.holderName ?? undefined) : undefined,
    bankname: row.number && bank ? bank.code : undefined,
    banknameDetails: row.number && bank ? bank.name : undefined,
    expiresAt: row.expiresAt?.toISOString(),
    manualCheckReason: row.status === "manual_check" ? (row.manualCheckReason ?? "potential_fake") : undefined,
    merchantOperationId: row.merchantOperationId,
    shopId: row.shopId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
