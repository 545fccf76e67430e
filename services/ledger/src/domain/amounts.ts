import { CURRENCY_SCALE, fieldError, isCurrency, Money, type Currency } from "@pgw/contracts";
import type Decimal from "decimal.js";

const DECIMAL = /^-?(0|[1-9]\d{0,17})(\.\d+)?$/;
/** fx_rate: a positive decimal string with at most 10 places (docs/architecture.md, Money). */
export const FX_RATE_SCALE = 10;

/** Which signs an amount may have. */
export type Sign = "positive" | "non_negative" | "non_zero";

/**
 * Parses a plain decimal string (no exponent, at most 18 integer digits) with at most `scale`
 * places and the given sign. Throws validation_error naming `field`.
 */
export function parseDecimal(value: string, field: string, scale: number, sign: Sign = "positive"): Decimal {
  if (!DECIMAL.test(value)) throw fieldError(field, "must be a decimal string");
  const amount = new Money(value);
  if (amount.decimalPlaces() > scale) throw fieldError(field, `must have at most ${scale} decimal places`);
  if (sign === "positive" && !amount.gt(0)) throw fieldError(field, "must be positive");
  if (sign === "non_negative" && amount.lt(0)) throw fieldError(field, "must not be negative");
  if (sign === "non_zero" && amount.isZero()) throw fieldError(field, "must not be zero");
  return amount;
}

/** An amount of `currency`: at most that currency's scale. */
export function parseAmount(value: string, field: string, currency: Currency, sign: Sign = "positive"): Decimal {
  return parseDecimal(value, field, CURRENCY_SCALE[currency], sign);
}

/** A supported currency code (RUB, USDT). */
export function parseCurrency(value: string, field: string): Currency {
  if (!isCurrency(value)) throw fieldError(field, "must be a supported currency");
  return value;
}

/** A non-empty string after trimming. */
export function parseText(value: string, field: string, maxLength = 2048): string {
  const text = value.trim();
  if (!text) throw fieldError(field, "must not be empty");
  if (text.length > maxLength) throw fieldError(field, `must be at most ${maxLength} characters`);
  return text;
}
