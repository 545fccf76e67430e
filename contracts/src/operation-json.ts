import { OperationType, type Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { TERMINAL_STATUSES } from "@pgw/proto/subjects";

// Optional public fields in a fixed order (docs/api.md, The operation object); absent ones are omitted,
// never null.
const OPTIONAL_FIELDS = [
  ["fx_source", "fxSource"],
  ["fx_rate", "fxRate"],
  ["recorded_currency", "recordedCurrency"],
  ["recorded_amount", "recordedAmount"],
  ["settlement_amount", "settlementAmount"],
  ["settlement_currency", "settlementCurrency"],
  ["commission_amount", "commissionAmount"],
  ["external_confirmation", "externalConfirmation"],
  ["number", "number"],
  ["name", "name"],
  ["bankname", "bankname"],
  ["bankname_details", "banknameDetails"],
  ["expires_at", "expiresAt"],
  ["manual_check_reason", "manualCheckReason"],
] as const;

/** The create request's fields (docs/api.md, Endpoints), in the order a refusal names them. */
export const CREATE_REQUEST_FIELDS = ["merchant_operation_id", "client_id", "client_ip", "method", "amount", "currency", "number", "name", "bankname"] as const;

/** The issue of a JSON field that arrived as another type than string. */
export const NOT_A_STRING = "must be a string";

/** The public API's operation object (docs/api.md, The operation object), from the service's message. */
export function operationJson(op: Operation): Record<string, unknown> {
  const json: Record<string, unknown> = {
    operation_id: op.operationId,
    type: op.type === OperationType.PAYOUT ? "payout" : "payment",
    status: op.status,
    method: op.method,
    expected_amount: op.expectedAmount,
    actual_amount: op.actualAmount,
    currency: op.currency,
  };
  for (const [publicName, field] of OPTIONAL_FIELDS) {
    const value = op[field];
    if (value === undefined) continue;
    json[publicName] = field === "externalConfirmation" ? { required: op.externalConfirmation!.required, methods: op.externalConfirmation!.methods } : value;
  }
  return json;
}

/** Receipt evidence of an operation as the receipts service reports it. */
export interface Evidence {
  /** not_ready, partial, complete or unavailable */
  status: string;
  items: { id: string; amount: string; completedAt: string; receiptUrl?: string }[];
}

/**
 * The public statuses an operation never leaves (docs/api.md, Statuses and transitions), defined
 * beside the event subjects.
 */
export { TERMINAL_STATUSES };

/**
 * The operation as get_operation_state (and the webhook payload) shows it: the operation object
 * plus `receipts` and `receipt_evidence_status`. `evidence` is consulted only for a completed
 * operation; null there means it could not be materialised (`unavailable`, no items).
 */
export function operationStateJson(op: Operation, evidence: Evidence | null): Record<string, unknown> {
  const json = operationJson(op);
  if (op.status !== "completed") {
    json.receipts = [];
    // Ended without a payment (cancelled, declined, expired): no receipts will ever come.
    json.receipt_evidence_status = TERMINAL_STATUSES.has(op.status) ? "complete" : "not_ready";
    return json;
  }
  const usable = evidence && evidence.status !== "unavailable" ? evidence : null;
  // A receipt item's amount is a JSON number (docs/api.md, Receipts and receipt_evidence_status): the decimal
  // string (up to its currency's 6 places in USDT) converts to the nearest double, exact while it
  // has at most 15 significant digits.
  json.receipts = usable ? usable.items.map((i) => ({ id: i.id, amount: Number(i.amount), completed_at: i.completedAt, receipt_url: i.receiptUrl ?? null })) : [];
  json.receipt_evidence_status = usable ? usable.status : "unavailable";
  return json;
}
