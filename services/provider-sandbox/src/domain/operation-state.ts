/**
 * Lifecycle of a sandbox operation (pure; no I/O).
 *
 * ```
 *            pay (payin)            ┌──────────┐
 *        ┌─────────────────────────▶│   paid   │  callback completed (paid amount)
 *        │   settle (payout)        ├──────────┤
 *        ├─────────────────────────▶│ settled  │  callback completed (settled amount)
 *  ┌─────┴───┐  decline             ├──────────┤
 *  │ created ├─────────────────────▶│ declined │  callback declined
 *  └─────┬───┘  expire              ├──────────┤
 *        ├─────────────────────────▶│ expired  │  callback expired
 *        │   cancel                 ├──────────┤
 *        └─────────────────────────▶│cancelled │  no callback
 *                                   └──────────┘
 * ```
 * Every status but `created` is final.
 */

/** Whether the operation takes money in (requisites given to a payer) or sends it out. */
export type OperationKind = "payin" | "payout";

/** Status of a sandbox operation as the provider reports it. */
export type OperationStatus = "created" | "paid" | "settled" | "declined" | "expired" | "cancelled";

/** What can happen to an operation. */
export type OperationEvent = "pay" | "settle" | "decline" | "expire" | "cancel";

/** Status carried by a provider callback. */
export type CallbackStatus = "completed" | "declined" | "expired";

/** Outcome of {@link transition}. */
export type Transition =
  | { ok: true; to: OperationStatus; callback: CallbackStatus | null }
  | { ok: false; reason: "not_created" | "wrong_kind" };

const TARGET: Record<OperationEvent, { to: OperationStatus; callback: CallbackStatus | null; only?: OperationKind }> = {
  pay: { to: "paid", callback: "completed", only: "payin" },
  settle: { to: "settled", callback: "completed", only: "payout" },
  decline: { to: "declined", callback: "declined" },
  expire: { to: "expired", callback: "expired" },
  cancel: { to: "cancelled", callback: null },
};

/** Decides where `event` takes an operation of `kind` in `status`, and which callback it fires. */
export function transition(kind: OperationKind, status: OperationStatus, event: OperationEvent): Transition {
  const target = TARGET[event];
  if (target.only && target.only !== kind) return { ok: false, reason: "wrong_kind" };
  if (status !== "created") return { ok: false, reason: "not_created" };
  return { ok: true, to: target.to, callback: target.callback };
}

/** Whether the payer's money has arrived (paid or settled), is still awaited, or will not come. */
export function fundsState(status: OperationStatus): "arrived" | "in_progress" | "not_found" {
  if (status === "paid" || status === "settled") return "arrived";
  return status === "created" ? "in_progress" : "not_found";
}
