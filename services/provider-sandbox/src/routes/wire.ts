import { formatExact, formatRequestAmount } from "@pgw/contracts";
import type { Delivery } from "../jobs/callbacks";
import type { Scenario } from "../domain/scenario";
import type { StoredLeg, StoredOperation } from "../store";

/** Wire JSON of the sandbox: the domain values as the provider API and the control API show them. */

const optional = <K extends string, V>(key: K, value: V | null | undefined) => (value === null || value === undefined ? {} : { [key]: value });

/** Answer of POST /api/v1/payins. */
export function payinAnswer(op: StoredOperation) {
  const { number, name, bankname } = op.requisites;
  return {
    reference: op.reference,
    status: op.status,
    requisites: { number, name, bankname },
    requires_receipt: op.requiresReceipt,
    ...optional("expires_at", op.expiresAt?.toISOString()),
  };
}

/** Answer of POST /api/v1/payouts and of a cancel. */
export function statusAnswer(op: StoredOperation) {
  return { reference: op.reference, status: op.status };
}

/** Answer of GET /api/v1/operations/:reference. */
export function operationView(op: StoredOperation) {
  return {
    reference: op.reference,
    operation_id: op.operationId,
    kind: op.kind,
    status: op.status,
    amount: formatRequestAmount(op.amount),
    ...optional("paid_amount", op.paidAmount && formatExact(op.paidAmount)),
    ...optional("expires_at", op.expiresAt?.toISOString()),
  };
}

/** Answer of GET /api/v1/operations/:reference/evidence. */
export function evidenceView(legs: StoredLeg[]) {
  return {
    legs: legs.map((leg) => ({
      leg_id: leg.id,
      amount: formatExact(leg.amount),
      completed_at: leg.completedAt.toISOString(),
      legacy: leg.legacy,
      items: leg.items.map((item) => ({
        id: item.id,
        amount: formatExact(item.amount),
        completed_at: item.completedAt.toISOString(),
        has_file: item.hasFile,
      })),
    })),
  };
}

/** Answer of a control call: the operation after it, and the first attempt of its callback. */
export function controlAnswer(op: StoredOperation, callback: Delivery | null) {
  return {
    reference: op.reference,
    operation_id: op.operationId,
    status: op.status,
    callback: callback ?? { delivered: false },
  };
}

/** A scenario as PUT / GET /control/scenario show it. */
export function scenarioView(s: Scenario) {
  return {
    method: s.method,
    accept: s.accept,
    accept_delay_ms: s.acceptDelayMs,
    requires_receipt: s.requiresReceipt,
    evidence: s.evidence,
    expires_in_s: s.expiresInS,
  };
}
