/**
 * Reading a receipt's text: the amounts it states and whether it names the operation's
 * destination (pure). Receipts are written by many banks in many formats, so amounts are read
 * in the common notations (`1500.00`, `1 500,00`, `1,500.00`, `1.500,00`) and destinations by
 * their digits (`+7 (900) 123-45-67`, `4111 1111 1111 1111`, masked `4111 11** **** 1111`).
 */
import { Money } from "@pgw/contracts";

// Labels that introduce the transferred amount / the destination, in English and Russian.
// Whole words only (\b is ASCII-only, so letters are looked at explicitly).
const word = (alternatives: string) => new RegExp(`(?<!\\p{L})(?:${alternatives})(?!\\p{L})`, "iu");
const AMOUNT_LABEL = word("amount|sum|total|paid|сумма|итого|к оплате|оплачено");
const DESTINATION_LABEL = word("recipient|beneficiary|payee|card|phone|account|получатель|карта|карты|телефон|номер|счёт|счет");

// Thousands separators seen in receipts: space, no-break and narrow spaces, apostrophe, comma, dot.
const GROUP = "[ \\u00a0\\u202f\\u2009',.]";
const AMOUNT_TOKEN = new RegExp(`(?<![\\d.,])(?:\\d{1,3}(?:${GROUP}\\d{3})+|\\d+)(?:[.,]\\d{1,2})?(?![\\d]|[.,]\\d)`, "gu");

/** A number written the way receipts write money, as a decimal; null when it is not one. */
export function parseAmountToken(token: string): Money | null {
  const m = /^(.*?)(?:[.,](\d{1,2}))?$/u.exec(token.trim());
  if (!m) return null;
  const [, whole, fraction] = m;
  const groups = whole.split(new RegExp(GROUP, "u"));
  if (groups.length > 1 && (!/^\d{1,3}$/.test(groups[0]) || groups.slice(1).some((g) => !/^\d{3}$/.test(g)))) return null;
  const digits = groups.join("");
  if (!/^\d+$/.test(digits)) return null;
  return new Money(fraction === undefined ? digits : `${digits}.${fraction}`);
}

/** Every amount-shaped number of `text`. */
export function amountsIn(text: string): Money[] {
  return [...text.matchAll(AMOUNT_TOKEN)].flatMap((m) => parseAmountToken(m[0]) ?? []);
}

/** The text's lines (pdf text items may arrive joined by newlines or by spaces). */
const linesOf = (text: string) => text.split(/\r?\n/u).filter((l) => l.trim() !== "");

/** What follows the first label on a line, up to the next label-looking word with a colon. */
function afterLabel(line: string, label: RegExp): string | null {
  const m = label.exec(line);
  if (!m) return null;
  const rest = line.slice(m.index + m[0].length);
  const next = /\s[\p{L}][\p{L} ]*:/u.exec(rest);
  return next ? rest.slice(0, next.index) : rest;
}

/**
 * The amounts a receipt states for the transfer: the numbers after an amount label when there
 * are any, else every amount-shaped number with decimals. Empty when it states none.
 */
export function statedAmounts(text: string): Money[] {
  const labelled = linesOf(text).flatMap((line) => {
    const rest = afterLabel(line, AMOUNT_LABEL);
    return rest === null ? [] : amountsIn(rest).slice(0, 1);
  });
  if (labelled.length > 0) return labelled;
  return [...text.matchAll(AMOUNT_TOKEN)].filter((m) => /[.,]\d{1,2}$/u.test(m[0])).flatMap((m) => parseAmountToken(m[0]) ?? []);
}

/** How the receipt's amount compares with the expected one. */
export type AmountCheck = "match" | "mismatch" | "missing";

/** match when the receipt states the expected amount, mismatch when it states others only. */
export function checkAmount(text: string, expected: Money): AmountCheck {
  const stated = statedAmounts(text);
  if (stated.length === 0) return "missing";
  return stated.some((a) => a.eq(expected)) ? "match" : "mismatch";
}

// Digit runs with the separators of card and phone notation, and mask characters.
const NUMBER_TOKEN = /\+?[\d*•xX](?:[\d*•xX \u00a0\-()]*[\d*•xX])?/gu;
const MASK = /[*•xX]/u;

const digitsOf = (s: string) => s.replace(/\D/gu, "");

/**
 * Whether `candidate` (as written on the receipt) designates `target` (the operation's
 * requisites number): same digits; for phones, the same last 10 digits (+7 / 8 prefixes);
 * for masked numbers, every visible digit in place and at least the last four visible.
 */
export function sameDestination(candidate: string, target: string): boolean {
  const want = digitsOf(target);
  if (want.length < 4) return false;
  const shown = candidate.replace(/[\s\u00a0\-()+]/gu, "");
  if (MASK.test(shown)) {
    if (shown.length !== want.length || MASK.test(shown.slice(-4))) return false;
    return [...shown].every((c, i) => MASK.test(c) || c === want[i]);
  }
  const got = digitsOf(shown);
  if (got === want) return true;
  const isPhone = (d: string) => d.length === 11 && /^[78]/u.test(d);
  return (isPhone(got) || got.length === 10) && (isPhone(want) || want.length === 10) && got.slice(-10) === want.slice(-10);
}

/** How the receipt's destination compares with the operation's requisites. */
export type DestinationCheck = "match" | "mismatch" | "missing";

/** Number-shaped tokens long enough to be a card, phone or account (masked ones included). */
const destinationsIn = (text: string) => [...text.matchAll(NUMBER_TOKEN)].map((m) => m[0]).filter((t) => t.replace(/[^\d*•xX]/gu, "").length >= 10);

/**
 * match when the receipt names the destination; mismatch when it names another one after a
 * destination label; missing when it names none.
 */
export function checkDestination(text: string, target: string): DestinationCheck {
  const labelled = linesOf(text).flatMap((line) => {
    const rest = afterLabel(line, DESTINATION_LABEL);
    return rest === null ? [] : destinationsIn(rest);
  });
  if (labelled.length > 0) return labelled.some((c) => sameDestination(c, target)) ? "match" : "mismatch";
  return destinationsIn(text).some((c) => sameDestination(c, target)) ? "match" : "missing";
}
