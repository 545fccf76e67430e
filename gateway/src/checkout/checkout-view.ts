import { TERMINAL_STATUSES, type ErrorCode, type ErrorDetail } from "@pgw/contracts";
import type { CheckoutState, UploadProblem } from "./translations";

/** The page's state for each public status of a payment. */
const STATE_OF_STATUS: Record<string, CheckoutState> = {
  pending: "awaiting_payment",
  awaiting_confirmation: "awaiting_receipt",
  manual_check: "under_review",
  completed: "paid",
  declined: "declined",
  expired: "expired",
  cancelled: "cancelled",
};

/** What the page shows for a payment in `status` (an unknown status reads as not yet paid). */
export const checkoutState = (status: string): CheckoutState => STATE_OF_STATUS[status] ?? "awaiting_payment";

/**
 * The parts of the page that exist only in some statuses, each with the statuses that show it. The
 * server renders a part only in those; the page's script removes it when the status it polls leaves
 * them (statuses only move towards the end, so a part never has to come back).
 *
 * - requisites: while the payment can take money or the transfer made is being reviewed; a paid,
 *   declined, expired or cancelled payment shows none, so nobody pays into it;
 * - countdown: while the payer can still pay (and the provider set an expiry);
 * - receipt: the upload form, while a receipt is awaited.
 */
export const SHOWN_WHILE = {
  requisites: ["pending", "awaiting_confirmation", "manual_check"],
  countdown: ["pending", "awaiting_confirmation"],
  receipt: ["awaiting_confirmation"],
} as const satisfies Record<string, readonly string[]>;
export type PagePart = keyof typeof SHOWN_WHILE;

/** Whether `part` belongs on the page of a payment in `status`. */
export const shows = (part: PagePart, status: string): boolean => (SHOWN_WHILE[part] as readonly string[]).includes(status);

/** A status that never changes again: the page stops asking. */
export const isFinal = (status: string): boolean => TERMINAL_STATUSES.has(status);

/**
 * Why a receipt upload was refused, told the way a payer understands it, from the error the upload
 * met (the same checks as confirm_payment). A server-side failure asks to try again later.
 */
export function uploadProblem(code: ErrorCode, details: readonly ErrorDetail[]): UploadProblem {
  switch (code) {
    case "payload_too_large":
      return "too_large";
    case "unsupported_media_type":
      return "wrong_type";
    case "invalid_state":
      return "not_accepted_now";
    case "validation_error":
      return details.some((d) => d.field === "receipt" && d.issue === "must not be empty") ? "empty" : "no_file";
    default:
      return "try_later";
  }
}

/** An expiry as the page shows it without script: `YYYY-MM-DD HH:MM` in UTC. */
export const utcMinute = (iso: string): string => new Date(iso).toISOString().slice(0, 16).replace("T", " ");
