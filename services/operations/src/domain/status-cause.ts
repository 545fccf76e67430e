import type { Status } from "./lifecycle";

/** What moved an operation from one status to the next (the admin timeline's "cause"). */
export type StatusCause = "allocated" | "provider" | "receipt_review" | "manual_check" | "cancel";

/**
 * The cause of a change from `from` to `to`. Pure. The lifecycle (lifecycle.ts) gives each pair
 * of statuses one event that makes it, so the pair alone says what happened: a cancel is the only
 * way into cancelled, leaving creating is the create finding a route, leaving awaiting_confirmation
 * for anything but expired is the receipt review, leaving manual_check is an operator, and every
 * other change (pending's outcomes, expiry) is the provider's report.
 */
export function statusCause(from: Status, to: Status): StatusCause {
  if (to === "cancelled") return "cancel";
  if (from === "creating") return "allocated";
  if (from === "manual_check") return "manual_check";
  if (from === "awaiting_confirmation" && to !== "expired") return "receipt_review";
  return "provider";
}

/** The audit action of a receipt review's outcome (the status it moves the operation to). */
export const reviewAction = (outcome: string) => `review:${outcome}`;
/** The audit action of an operator's manual-check decision. */
export const manualCheckAction = (decision: "approve" | "decline") => `manual_check:${decision}`;

/** The audit action recorded with a decision that caused a change to `to` (review-operation.ts), if any. */
export function auditActionOf(cause: StatusCause, to: Status): string | null {
  if (cause === "receipt_review") return reviewAction(to);
  if (cause === "manual_check") return manualCheckAction(to === "completed" ? "approve" : "decline");
  return null;
}
