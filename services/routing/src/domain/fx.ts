/** FX quote math: rates are decimals with at most 10 places (units of target per unit of base). */
import { Money } from "@pgw/contracts";
import type Decimal from "decimal.js";

export const FX_RATE_PLACES = 10;

/** The quote routing hands out with an auto-conversion allocation. */
export interface FxQuoteFacts {
  source: string;
  /** Decimal string, at most 10 places, no exponent. */
  rate: string;
  targetCurrency: string;
}

/** A rate as a decimal string: rounded half-even to 10 places, trailing zeros dropped. */
export function formatRate(rate: Decimal.Value): string {
  return new Money(rate).toDecimalPlaces(FX_RATE_PLACES, Money.ROUND_HALF_EVEN).toFixed();
}

/** Whether a value is usable as a rate: a positive decimal. */
export function isValidRate(rate: Decimal.Value): boolean {
  try {
    const d = new Money(rate);
    return d.isFinite() && d.gt(0);
  } catch {
    return false;
  }
}

/** Builds the quote for converting into `targetCurrency` at `rate` from `source`. */
export function fxQuote(source: string, rate: Decimal.Value, targetCurrency: string): FxQuoteFacts {
  if (!isValidRate(rate)) throw new RangeError(`fx rate must be a positive decimal, got ${String(rate)}`);
  return { source, rate: formatRate(rate), targetCurrency };
}
