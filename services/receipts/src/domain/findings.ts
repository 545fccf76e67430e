/**
 * What a receipt review can find. Each finding belongs to one family, and the family (not the
 * individual code) is what the decision table in review.ts reads.
 */

/** Signs that the document was forged or altered, or does not show this payment. */
export const FORGERY_SIGNS = [
  "edited_in_place",
  "incremental_update",
  "javascript",
  "embedded_file",
  "suspicious_producer",
  "amount_mismatch",
  "destination_mismatch",
  "amount_differs_from_provider",
] as const;

/** Reasons the document could not be validated at all; never a fraud signal. */
export const UNVERIFIABLE = ["not_a_pdf", "unreadable", "decompression_limit", "no_text", "amount_missing", "destination_missing"] as const;

/** Facts recorded for the reviewer that decide nothing by themselves. */
export const NOTES = ["declared_type_mismatch", "funds_arrived", "funds_in_progress", "funds_not_found", "provider_unavailable"] as const;

export type ForgerySign = (typeof FORGERY_SIGNS)[number];
export type Unverifiable = (typeof UNVERIFIABLE)[number];
export type Note = (typeof NOTES)[number];
export type FindingCode = ForgerySign | Unverifiable | Note;

/** One review finding with an optional human-readable detail for the console. */
export interface Finding {
  code: FindingCode;
  detail?: string;
}

const FORGERY = new Set<FindingCode>(FORGERY_SIGNS);
const UNVERIFIABLE_SET = new Set<FindingCode>(UNVERIFIABLE);

export const isForgerySign = (f: Finding) => FORGERY.has(f.code);
export const isUnverifiable = (f: Finding) => UNVERIFIABLE_SET.has(f.code);
