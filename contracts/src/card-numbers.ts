/**
 * Card numbers as logs and the admin API show them: the first six and the last four digits, the
 * rest as `*` (PCI DSS's display rule).
 */

const CARD_NUMBER = /^\d{13,19}$/;
/**
 * 13–19 digits standing alone: not part of a longer word, id or hex string, not either side of a
 * decimal point, and not a bare JSON number (after `:`, `,` or `[`), which stays valid JSON.
 */
const STANDALONE = /(?<![\w:,[]|\d\.)\d{13,19}(?!\w|\.\d)/g;

const masked = (digits: string) => `${digits.slice(0, 6)}${"*".repeat(digits.length - 10)}${digits.slice(-4)}`;

/** A card number (13–19 digits) masked; any other value (a phone number) as it is. */
export function maskCardNumber(value: string): string {
  return CARD_NUMBER.test(value) ? masked(value) : value;
}

/** `text` with every card number standing alone in it masked (a log line). */
export function maskCardNumbersIn(text: string): string {
  return text.replace(STANDALONE, masked);
}
