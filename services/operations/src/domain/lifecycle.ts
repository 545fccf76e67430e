/**
 * The operation state machine (docs/api.md, Statuses and transitions; diagram in
 * services/operations/README.md). `creating` is internal: the row exists while the Create call is
 * allocating, so a cancel by merchant_operation_id can win the race.
 *
 *   creating ──allocated──▶ pending | awaiting_confirmation
 *   creating ──cancel──▶ cancelled (no details, ever)
 *   pending ──provider completed──▶ completed      pending ──declined / expired──▶ declined / expired
 *   awaiting_confirmation ──review──▶ completed | manual_check | declined
 *   awaiting_confirmation ──provider expired──▶ expired
 *   (on a receipt route the review decides, asking the provider whether the money arrived: money
 *   arriving or the provider refusing is what the review weighs against the receipt, so neither
 *   ends the operation by itself; requisites that lapsed unpaid end the wait for a receipt, as
 *   expires_at told the merchant they would)
 *   manual_check ──admin──▶ completed | declined
 *   pending | awaiting_confirmation | manual_check ──cancel (payments)──▶ cancelled
 *   (docs/api.md, Cancel: a merchant may cancel any non-terminal payment; money the provider
 *   reported for one under manual check becomes late funds, as for any payment that ends without
 *   capturing it)
 */
export type Status = "creating" | "pending" | "awaiting_confirmation" | "manual_check" | "completed" | "cancelled" | "declined" | "expired";

export const TERMINAL: ReadonlySet<Status> = new Set(["completed", "cancelled", "declined", "expired"]);

export type LifecycleEvent =
  | { kind: "allocated"; requiresReceipt: boolean }
  | { kind: "provider_completed" }
  | { kind: "provider_declined" }
  | { kind: "provider_expired" }
  | { kind: "review"; outcome: "completed" | "manual_check" | "declined" }
  | { kind: "manual_resolution"; decision: "approve" | "decline" }
  | { kind: "cancel"; type: "payment" | "payout" };

const PROVIDER_OUTCOME = { provider_completed: "completed", provider_declined: "declined" } as const;

/** Why an event does not apply to the current state. */
export type Refusal = "already_terminal" | "not_cancellable" | "not_applicable";

/** The next status, or the reason the event does not apply. Pure: no I/O, no clock. */
export function transition(status: Status, event: LifecycleEvent): { to: Status } | { refused: Refusal } {
  if (TERMINAL.has(status)) return { refused: "already_terminal" };
  switch (event.kind) {
    case "allocated":
      return status === "creating" ? { to: event.requiresReceipt ? "awaiting_confirmation" : "pending" } : { refused: "not_applicable" };
    case "provider_completed":
    case "provider_declined":
      return status === "pending" ? { to: PROVIDER_OUTCOME[event.kind] } : { refused: "not_applicable" };
    case "provider_expired":
      return status === "pending" || status === "awaiting_confirmation" ? { to: "expired" } : { refused: "not_applicable" };
    case "review":
      return status === "awaiting_confirmation" ? { to: event.outcome } : { refused: "not_applicable" };
    case "manual_resolution":
      return status === "manual_check" ? { to: event.decision === "approve" ? "completed" : "declined" } : { refused: "not_applicable" };
    case "cancel":
      return event.type === "payout" ? { refused: "not_cancellable" } : { to: "cancelled" };
  }
}

/**
 * settlement_amount and commission_amount are expected figures until the operation is terminal,
 * then settle to the captured amount (docs/api.md, The operation object). Every terminal status but
 * completed ends without capturing anything (a payout's reserve goes back whole), so both settle to
 * zero there.
 */
export const UNCAPTURED_FIGURES = { settlementAmount: "0", commissionAmount: "0" } as const;

/** Whether entering `status` ends the operation without capturing money. */
export function endsUncaptured(status: Status): boolean {
  return TERMINAL.has(status) && status !== "completed";
}

/** Statuses the public API shows (creating never leaves the service). */
export function isPublic(status: Status): boolean {
  return status !== "creating";
}
