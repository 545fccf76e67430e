/**
 * The postings of each money flow (docs/architecture.md, Money; scheme in services/ledger/README.md).
 * S = the shop's settlement currency, C = the operation's currency (C = S without conversion).
 */
import { Money, type Currency } from "@pgw/contracts";
import type Decimal from "decimal.js";
import { shopAccount, systemAccount, type Posting } from "./journal";

/** What was captured for a completed operation, all validated (see status-event.ts). */
export interface Capture {
  shopId: string;
  /** C and the physical amount in it. */
  currency: Currency;
  actual: Decimal;
  /** S and the amount in it (actual × fx_rate, or actual). */
  settlementCurrency: Currency;
  recorded: Decimal;
  commission: Decimal;
  /** Payment: credited (recorded − commission). Payout: charged (recorded + commission). */
  settlement: Decimal;
}

/** Payout created: available → reserved (amount + commission, in S). */
export function reservePostings(shopId: string, currency: Currency, total: Decimal): Posting[] {
  return [
    { account: shopAccount(shopId, "available", currency), amount: total.neg() },
    { account: shopAccount(shopId, "reserved", currency), amount: total },
  ];
}

/** Payout declined, expired or cancelled: reserved → available. */
export function releasePostings(shopId: string, currency: Currency, total: Decimal): Posting[] {
  return reservePostings(shopId, currency, total.neg());
}

/**
 * The provider side of a capture, `direction` −1 (money came in from the provider: payment) or
 * +1 (money went out through the provider: payout). Without conversion one posting on
 * provider_clearing in S. With conversion the provider side is in C, and fx_conversion takes
 * the other side in both currencies, so each currency sums to zero on its own:
 * clearing(C) ∓actual, fx_conversion(C) ±actual, fx_conversion(S) ∓recorded.
 */
function providerSide(c: Capture, direction: 1 | -1): Posting[] {
  if (c.currency === c.settlementCurrency) return [{ account: systemAccount("provider_clearing", c.settlementCurrency), amount: c.recorded.times(direction) }];
  return [
    { account: systemAccount("provider_clearing", c.currency), amount: c.actual.times(direction) },
    { account: systemAccount("fx_conversion", c.currency), amount: c.actual.times(-direction) },
    { account: systemAccount("fx_conversion", c.settlementCurrency), amount: c.recorded.times(direction) },
  ];
}

/** Payment completed: clearing → available (credited) + commission_revenue (commission). */
export function paymentCompletedPostings(c: Capture): Posting[] {
  return [
    ...providerSide(c, -1),
    { account: shopAccount(c.shopId, "available", c.settlementCurrency), amount: c.settlement },
    { account: systemAccount("commission_revenue", c.settlementCurrency), amount: c.commission },
  ];
}

/**
 * Payout completed: the whole reserve leaves `reserved`, the captured amount goes to clearing and
 * the commission to commission_revenue; the difference between reserve and charge (a partial
 * payout) goes back to available. Without a held reserve (`reserved` = 0) the charge comes
 * straight from available.
 */
export function payoutCompletedPostings(c: Capture, reserved: Decimal): Posting[] {
  return [
    { account: shopAccount(c.shopId, "reserved", c.settlementCurrency), amount: reserved.neg() },
    { account: shopAccount(c.shopId, "available", c.settlementCurrency), amount: reserved.minus(c.settlement) },
    { account: systemAccount("commission_revenue", c.settlementCurrency), amount: c.commission },
    ...providerSide(c, 1),
  ];
}

/** Admin adjustment: positive credits the shop's available, negative debits it; manual_adjustments takes the other side. */
export function adjustmentPostings(shopId: string, currency: Currency, amount: Decimal): Posting[] {
  return [
    { account: shopAccount(shopId, "available", currency), amount },
    { account: systemAccount("manual_adjustments", currency), amount: new Money(0).minus(amount) },
  ];
}
