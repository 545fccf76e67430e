import Decimal from "decimal.js";

/** Decimal arithmetic for money: 40 significant digits, half-even rounding; never `number`. */
export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -40, toExpPos: 40 });
export type Money = Decimal;

/** Supported currencies and their scales (decimal places). */
export const CURRENCY_SCALE = { RUB: 2, USDT: 6 } as const;
export type Currency = keyof typeof CURRENCY_SCALE;
export const SUPPORTED_CURRENCIES = Object.keys(CURRENCY_SCALE) as Currency[];

/** Scale of request amounts (the public API's `amount`). */
export const REQUEST_AMOUNT_SCALE = 2;

export function isCurrency(value: unknown): value is Currency {
  return typeof value === "string" && Object.prototype.hasOwnProperty.call(CURRENCY_SCALE, value);
}

/** Integer digits a request amount may have (operations stores it as NUMERIC(20, 2)). */
export const REQUEST_AMOUNT_MAX_DIGITS = 18;
// 0, or at most REQUEST_AMOUNT_MAX_DIGITS digits without a leading zero.
const INTEGER_PART = `(0|[1-9]\\d{0,${REQUEST_AMOUNT_MAX_DIGITS - 1}})`;
// Positive or zero decimal with at most 2 places.
const REQUEST_AMOUNT = new RegExp(`^${INTEGER_PART}(\\.\\d{1,${REQUEST_AMOUNT_SCALE}})?$`);
// Positive or zero decimal with exactly 2 places: one spelling per value.
const CREATE_AMOUNT = new RegExp(`^${INTEGER_PART}\\.\\d{${REQUEST_AMOUNT_SCALE}}$`);

function positiveMatching(pattern: RegExp, value: unknown): Decimal | null {
  if (typeof value !== "string" || !pattern.test(value)) return null;
  const amount = new Money(value);
  return amount.gt(0) ? amount : null;
}

/**
 * Parses a requested amount as units pass it on (routing's Allocate, a provider's create): a
 * positive decimal string with at most 2 places; null when malformed. A merchant's create is
 * parsed by parseCreateAmount, a reported fact by parseCurrencyAmount.
 */
export function parseRequestAmount(value: unknown): Decimal | null {
  return positiveMatching(REQUEST_AMOUNT, value);
}

/**
 * Parses a create request's `amount` as docs/api.md, Amounts and scales, has it (scale 2): a positive decimal string with
 * exactly 2 places and no leading zero ("100.50", "0.50"; not "100.5", "1500", "1e3", "01.00"), so
 * each value has one spelling and the answer can echo it as sent; null otherwise.
 */
export function parseCreateAmount(value: unknown): Decimal | null {
  return positiveMatching(CREATE_AMOUNT, value);
}

/** Rounds half-even to the currency's scale. */
export function roundTo(amount: Decimal.Value, currency: Currency): Decimal {
  return new Money(amount).toDecimalPlaces(CURRENCY_SCALE[currency], Decimal.ROUND_HALF_EVEN);
}

/** Fixed-point string with the currency's scale (never `toString`, which drops trailing zeros). */
export function formatAmount(amount: Decimal.Value, currency: Currency): string {
  return roundTo(amount, currency).toFixed(CURRENCY_SCALE[currency]);
}

/** Fixed-point string with the request scale (2 places), for echoing request amounts. */
export function formatRequestAmount(amount: Decimal.Value): string {
  return new Money(amount).toFixed(REQUEST_AMOUNT_SCALE, Decimal.ROUND_HALF_EVEN);
}

/**
 * An amount exactly as it is, for a provider's wire or a reviewer's text: at least 2 places and no
 * trailing zeros beyond ("1500.00", "7.125"); never rounded.
 */
export function formatExact(amount: Decimal.Value): string {
  const exact = new Money(amount);
  return exact.toFixed(Math.max(REQUEST_AMOUNT_SCALE, exact.decimalPlaces()));
}

// A plain decimal string: no sign, no exponent, at most 18 integer digits (the money columns' room).
const PLAIN_DECIMAL = /^(0|[1-9]\d{0,17})(\.\d+)?$/;

/**
 * Parses an amount of `currency` from the money's source (a provider, an admin): a positive plain
 * decimal string whose value fits the currency's scale exactly ("7.125" in USDT; "7.1250000" too,
 * it is the same number). Null when it is malformed, not positive, of an unsupported currency, or
 * would need rounding: a fact is never rounded silently.
 */
export function parseCurrencyAmount(value: unknown, currency: string): Decimal | null {
  if (typeof value !== "string" || !isCurrency(currency) || !PLAIN_DECIMAL.test(value)) return null;
  const amount = new Money(value);
  return amount.gt(0) && amount.decimalPlaces() <= CURRENCY_SCALE[currency] ? amount : null;
}

/**
 * A provider-reported amount as an operation books it: at its currency's scale ("7.125" in USDT
 * becomes "7.125000"); null when {@link parseCurrencyAmount} refuses it, so there is nothing to book.
 */
export function capturedAmount(reported: string, currency: string): string | null {
  const amount = parseCurrencyAmount(reported, currency);
  return amount && formatAmount(amount, currency as Currency);
}
