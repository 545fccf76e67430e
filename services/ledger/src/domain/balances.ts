import { formatAmount, isCurrency, Money, SUPPORTED_CURRENCIES, type Currency } from "@pgw/contracts";
import type Decimal from "decimal.js";
import type { ShopAccountKind } from "./journal";

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

/**
 * Whether reserving `total` would take the available balance below −overdraft_limit
 * (available − total < −overdraft_limit): the payout is then refused.
 */
export function exceedsOverdraft(available: Decimal, total: Decimal, overdraftLimit: Decimal): boolean {
  return available.minus(total).lt(overdraftLimit.neg());
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

/** One shop account as read in one snapshot: its materialised balance and the sum of its postings. */
export interface AccountReading {
  kind: ShopAccountKind;
  currency: string;
  balance: Decimal;
  journal: Decimal;
}

/** Why a reading cannot be answered. */
export interface Inconsistency {
  kind: ShopAccountKind;
  currency: string;
  balance: string;
  journal: string;
  issue: "balance_differs_from_journal" | "negative_reserved";
}

/**
 * The shop's positions from one snapshot of its accounts, or the inconsistencies that forbid an
 * answer: a materialised balance that differs from its journal, or a negative reserve.
 */
export function positionsOf(readings: readonly AccountReading[]): { positions: ShopPosition[]; inconsistencies: Inconsistency[] } {
  const inconsistencies: Inconsistency[] = [];
  const positions = new Map<Currency, ShopPosition>();
  for (const r of readings) {
    const fact = { kind: r.kind, currency: r.currency, balance: r.balance.toFixed(), journal: r.journal.toFixed() };
    if (!r.balance.eq(r.journal)) inconsistencies.push({ ...fact, issue: "balance_differs_from_journal" });
    else if (r.kind === "reserved" && r.balance.lt(0)) inconsistencies.push({ ...fact, issue: "negative_reserved" });
    if (!isCurrency(r.currency)) continue;
    const p = positions.get(r.currency) ?? { currency: r.currency, available: new Money(0), reserved: new Money(0) };
    p[r.kind] = r.balance;
    positions.set(r.currency, p);
  }
  return { positions: [...positions.values()], inconsistencies };
}
