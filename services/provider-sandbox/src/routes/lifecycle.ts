import { AppError, formatExact, Money } from "@pgw/contracts";
import type { CallbackPayload } from "../domain/callback";
import { legsOf, planEvidence } from "../domain/evidence";
import { transition, type OperationEvent } from "../domain/operation-state";
import type { CallbackSender, Delivery } from "../jobs/callbacks";
import type { Completion, Store, StoredOperation } from "../store";

/** Collaborators of the lifecycle use case. */
export interface LifecycleDeps {
  store: Store;
  callbacks: CallbackSender;
  now: () => Date;
  newId: () => string;
}

/** What a pay / settle brings: the amount paid (pay only) and how it was split in legs. */
export interface Payment {
  amount?: Money;
  legs?: Money[];
}

/** Result of {@link applyEvent}: the operation after the change, and its callback's first attempt. */
export interface Outcome {
  operation: StoredOperation;
  callback: Delivery | null;
}

/** The evidence a pay / settle leaves behind, planned under the method's current scenario. */
async function evidenceOf(deps: LifecycleDeps, op: StoredOperation, total: Money, split: Money[] | undefined, now: Date): Promise<Omit<Completion, "to">> {
  const legs = legsOf(total, split);
  if (!legs) throw new AppError("validation_error", "legs must add up to the amount", [{ field: "legs", issue: `must add up to ${formatExact(total)}` }]);
  const { evidence } = await deps.store.scenario(op.method);
  const planned = planEvidence(evidence, legs, { createdAt: op.createdAt, now }, deps.newId);
  return { paidAmount: total, evidence, legs: planned };
}

const PAST_TENSE: Record<OperationEvent, string> = { pay: "paid", settle: "settled", decline: "declined", expire: "expired", cancel: "cancelled" };

/**
 * Applies `event` to `op`: decide (state machine) → plan legs and their items (pay / settle) → save
 * (compare-and-set on `created`) → first callback attempt. Raises `invalid_state` when the operation
 * is not `created` or the event does not fit its kind (also when another change won a race), and
 * `validation_error` when the legs do not add up.
 */
export async function applyEvent(deps: LifecycleDeps, op: StoredOperation, event: OperationEvent, payment: Payment = {}): Promise<Outcome> {
  const decision = transition(op.kind, op.status, event);
  if (!decision.ok) {
    const why = decision.reason === "wrong_kind" ? `a ${op.kind} cannot be ${PAST_TENSE[event]}` : `operation is ${op.status}`;
    throw new AppError("invalid_state", why);
  }
  const now = deps.now();
  const money: Omit<Completion, "to"> = event === "pay" || event === "settle" ? await evidenceOf(deps, op, payment.amount ?? op.amount, payment.legs, now) : {};
  if (!(await deps.store.complete(op.reference, { to: decision.to, ...money }))) {
    const current = await deps.store.byReference(op.reference);
    throw new AppError("invalid_state", `operation is ${current?.status ?? "gone"}`);
  }
  const operation: StoredOperation = { ...op, status: decision.to, paidAmount: money.paidAmount ?? op.paidAmount, evidence: money.evidence ?? op.evidence };
  if (!decision.callback) return { operation, callback: null };
  const payload: CallbackPayload = {
    callback_id: deps.newId(),
    reference: op.reference,
    operation_id: op.operationId,
    status: decision.callback,
    ...(money.paidAmount ? { amount: formatExact(money.paidAmount) } : {}),
    occurred_at: now.toISOString(),
  };
  return { operation, callback: await deps.callbacks.send(op.callbackUrl, payload) };
}
