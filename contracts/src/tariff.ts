/**
 * Commission and settlement figures of an operation from a tariff: the ledger's `Quote` and payout
 * reserve, and operations' completion, which settles with the tariff the create was quoted with.
 * Decimal only; every rounding is half-even to the settlement currency's scale.
 */
import type Decimal from "decimal.js";
import { AppError } from "./errors";
import { formatAmount, isCurrency, Money, roundTo, type Currency } from "./money";

export type OperationKind = "payment" | "payout";

/** A shop's (or the default) commission for one operation type, method and settlement currency. */
export interface Tariff {
  /** Percent of the amount in the settlement currency: 2.5 means 2.5 %. */
  percent: Decimal;
  /** Added to the percentage, in the settlement currency. */
  fixed: Decimal;
  /** Floor of the commission, in the settlement currency. */
  minimum: Decimal;
}

export interface QuoteInput {
  type: OperationKind;
  amount: Decimal;
  currency: Currency;
  settlementCurrency: Currency;
  /** Units of the settlement currency per unit of `currency`; required when they differ. */
  fxRate?: Decimal;
  tariff: Tariff;
}

export interface Quote {
  /** The amount in the settlement currency (amount × fx_rate, or the amount itself). */
  recorded: Decimal;
  commission: Decimal;
  /** Payment: recorded − commission (credited). Payout: recorded + commission (charged). */
  settlement: Decimal;
  settlementCurrency: Currency;
}

/**
 * amount × fx_rate rounded half-even to the settlement currency's scale; without conversion the
 * amount itself. Throws validation_error when a conversion has no rate, or a rate other than 1 is
 * given without one.
 */
export function amountInSettlement(amount: Decimal, currency: Currency, settlementCurrency: Currency, fxRate?: Decimal): Decimal {
  if (currency === settlementCurrency) {
    if (fxRate && !fxRate.eq(1)) throw new AppError("validation_error", "fx_rate must be absent without conversion", [{ field: "fx_rate", issue: "must be absent without conversion" }]);
    return roundTo(amount, settlementCurrency);
  }
  if (!fxRate) throw new AppError("validation_error", `fx_rate is required to convert ${currency} to ${settlementCurrency}`, [{ field: "fx_rate", issue: "is required with conversion" }]);
  return roundTo(amount.times(fxRate), settlementCurrency);
}

/**
 * max(recorded × percent / 100 + fixed, minimum), rounded half-even to the currency's scale.
 * A payment's commission never exceeds the payment itself (the shop is never charged for being paid).
 */
export function commissionOf(type: OperationKind, tariff: Tariff, recorded: Decimal, currency: Currency): Decimal {
  const raw = Money.max(recorded.times(tariff.percent).div(100).plus(tariff.fixed), tariff.minimum);
  const commission = roundTo(raw, currency);
  return type === "payment" ? Money.min(commission, recorded) : commission;
}

/** The figures of an operation: recorded amount, commission and settlement amount. */
export function quote(input: QuoteInput): Quote {
  const { settlementCurrency } = input;
  const recorded = amountInSettlement(input.amount, input.currency, settlementCurrency, input.fxRate);
  const commission = commissionOf(input.type, input.tariff, recorded, settlementCurrency);
  const settlement = input.type === "payment" ? recorded.minus(commission) : recorded.plus(commission);
  return { recorded, commission, settlement, settlementCurrency };
}

/** A tariff as the ledger's answers carry it: decimal strings. */
export interface TariffFields {
  percent: string;
  fixed: string;
  minimum: string;
}

/** Domain → wire: each part as a plain decimal string, at the precision it is stored with. */
export function tariffFields(t: Tariff): TariffFields {
  return { percent: t.percent.toFixed(), fixed: t.fixed.toFixed(), minimum: t.minimum.toFixed() };
}

/** Wire → domain; null when a part is missing or not a finite decimal. */
export function tariffOf(f: Partial<TariffFields> | undefined): Tariff | null {
  const parts = [f?.percent, f?.fixed, f?.minimum].map((v) => (typeof v === "string" && /^-?\d+(\.\d+)?$/.test(v) ? new Money(v) : null));
  const [percent, fixed, minimum] = parts;
  return percent && fixed && minimum ? { percent, fixed, minimum } : null;
}

/** The figures as strings at the settlement currency's scale (the ledger's answers, operations' row). */
export function quoteFigures(q: Quote) {
  const c = q.settlementCurrency;
  return {
    commissionAmount: formatAmount(q.commission, c),
    settlementAmount: formatAmount(q.settlement, c),
    settlementCurrency: c,
    recordedAmount: formatAmount(q.recorded, c),
  };
}

/**
 * `quote`'s figures (quoteFigures) for currencies as operations stores and receives them, as text;
 * null when either is not a currency a tariff settles.
 */
export function figuresByTariff(input: Omit<QuoteInput, "currency" | "settlementCurrency"> & { currency: string; settlementCurrency: string }): ReturnType<typeof quoteFigures> | null {
  const { currency, settlementCurrency } = input;
  if (!isCurrency(currency) || !isCurrency(settlementCurrency)) return null;
  return quoteFigures(quote({ ...input, currency, settlementCurrency }));
}
