import { formatAmount, Money, SUPPORTED_CURRENCIES, type Currency } from "@pgw/kit";
import type Decimal from "decimal.js";

/** The shop's two accounts in one currency, as materialised in the ledger. */
export interface ShopPosition {
  currency: Currency;
  /** Credit-natural available balance (already reduced by in-flight payout reserves). */
  available: Decimal;
  /** Held for in-flight payouts; never negative. */
  reserved: Decimal;
}

export interface BalanceRow {
  currency: Currency;
  balance: string;
  currentMinus: string;
  reserved: string;
}

/** current_minus = max(-(balance + reserved), 0): the debt excluding in-flight payout reserves. */
export function currentMinus(available: Decimal, reserved: Decimal): Decimal {
  return Money.max(available.plus(reserved).neg(), 0);
}

/** One row per supported currency, zeros where the shop has no account yet. */
export function balanceRows(positions: ShopPosition[]): BalanceRow[] {
  return SUPPORTED_CURRENCIES.map((currency) => {
    const p = positions.find((x) => x.currency === currency);
    const available = p?.available ?? new Money(0);
    const reserved = p?.reserved ?? new Money(0);
    return {
      currency,
      balance: formatAmount(available, currency),
      currentMinus: formatAmount(currentMinus(available, reserved), currency),
      reserved: formatAmount(reserved, currency),
    };
  });
}
