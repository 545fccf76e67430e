/**
 * The receipt review's decision (docs/architecture.md, Receipt review), pure. The first matching
 * row wins:
 *
 * | # | what the review found                                              | outcome                          |
 * |---|--------------------------------------------------------------------|----------------------------------|
 * | 1 | the file is an image (JPEG / PNG): nothing in it can be validated  | manual_check `not_terminal`      |
 * | 2 | a forgery sign, and the provider says the money never arrived      | declined                         |
 * | 3 | a forgery sign (tampered structure, wrong amount or destination)   | manual_check `potential_fake`    |
 * | 4 | the PDF could not be validated (unreadable or incomplete, no text, |                                  |
 * |   | no amount, no destination)                                         | manual_check `not_terminal`      |
 * | 5 | the provider says the money arrived, and how much                  | completed (provider's amount)    |
 * | 6 | the provider says the money arrived without saying how much, or    |                                  |
 * |   | says the transfer is in progress                                   | manual_check `not_terminal`      |
 * | 7 | the provider says the money never arrived                          | manual_check `potential_fake`    |
 * | 8 | the provider could not be asked                                    | retry (503, nothing changes)     |
 *
 * Why: a forgery sign always reaches a human unless the provider's own word already settles it
 * (row 2: no money moved and the document lies, so nothing is lost by declining). A document
 * that merely cannot be read is never treated as fraud (rows 1 and 4). A clean, matching receipt
 * is only as good as the provider's answer: arrived completes with the amount the provider
 * received (never the expected one: a human learns an amount the provider does not state), in
 * progress waits for a human, and "never arrived" contradicts the receipt (row 7). Rows 1–4 need no provider answer, so an
 * unreachable provider only holds back an otherwise clean receipt (row 8).
 */
import { formatExact, type Money } from "@pgw/contracts";
import { isForgerySign, isUnverifiable, type Finding } from "./findings";
import { checkAmount, checkDestination, statedAmounts } from "./receipt-text";

/** The provider's answer to "did the money arrive?" (routing.CheckFunds); unknown when it failed. */
export type Funds = { state: "arrived"; amount?: Money } | { state: "in_progress" } | { state: "not_found" } | { state: "unknown" };

export type ManualCheckReason = "potential_fake" | "not_terminal";

/** What the review decided. `retry` changes nothing: the caller answers 503. */
export type ReviewDecision =
  | { outcome: "completed"; actualAmount: Money }
  | { outcome: "manual_check"; reason: ManualCheckReason }
  | { outcome: "declined" }
  | { outcome: "retry" };

/** What the operation expects a receipt to show. */
export interface Expectation {
  amount: Money;
  /** The requisites' number (card or phone) the payer was told to pay to; absent when unknown. */
  destination?: string;
}

/**
 * Findings from a PDF's text: the amount against the expected one and against what the
 * provider received, and the destination against the requisites.
 */
export function inspectReceiptText(text: string, expected: Expectation, funds: Funds): Finding[] {
  if (text.trim() === "") return [];
  const findings: Finding[] = [];
  const amount = checkAmount(text, expected.amount);
  if (amount === "mismatch") findings.push({ code: "amount_mismatch", detail: `receipt states ${statedAmounts(text).map((a) => a.toFixed(2)).join(", ")}, expected ${expected.amount.toFixed(2)}` });
  if (amount === "missing") findings.push({ code: "amount_missing", detail: "no amount found in the receipt" });
  if (funds.state === "arrived" && funds.amount && !funds.amount.eq(expected.amount) && amount === "match") {
    findings.push({ code: "amount_differs_from_provider", detail: `receipt states ${expected.amount.toFixed(2)}, provider received ${formatExact(funds.amount)}` });
  }
  if (expected.destination) {
    const destination = checkDestination(text, expected.destination);
    if (destination === "mismatch") findings.push({ code: "destination_mismatch", detail: "receipt names another recipient" });
    if (destination === "missing") findings.push({ code: "destination_missing", detail: "recipient not found in the receipt" });
  }
  return findings;
}

/** The provider's answer as a finding for the reviewer. */
export function fundsFinding(funds: Funds): Finding {
  switch (funds.state) {
    case "arrived":
      return { code: "funds_arrived", detail: funds.amount ? `provider received ${formatExact(funds.amount)}` : "provider reports the funds arrived" };
    case "in_progress":
      return { code: "funds_in_progress", detail: "provider reports the transfer in progress" };
    case "not_found":
      return { code: "funds_not_found", detail: "provider reports no such transfer" };
    case "unknown":
      return { code: "provider_unavailable", detail: "provider could not be asked" };
  }
}

/** Decides the outcome from the file's kind, the findings and the provider's answer (table above). */
export function decideReview(kind: "pdf" | "image", findings: Finding[], funds: Funds): ReviewDecision {
  if (kind === "image") return { outcome: "manual_check", reason: "not_terminal" };
  if (findings.some(isForgerySign)) return funds.state === "not_found" ? { outcome: "declined" } : { outcome: "manual_check", reason: "potential_fake" };
  if (findings.some(isUnverifiable)) return { outcome: "manual_check", reason: "not_terminal" };
  switch (funds.state) {
    case "arrived":
      return funds.amount ? { outcome: "completed", actualAmount: funds.amount } : { outcome: "manual_check", reason: "not_terminal" };
    case "in_progress":
      return { outcome: "manual_check", reason: "not_terminal" };
    case "not_found":
      return { outcome: "manual_check", reason: "potential_fake" };
    case "unknown":
      return { outcome: "retry" };
  }
}
