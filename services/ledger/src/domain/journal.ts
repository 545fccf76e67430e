/**
 * The double-entry journal (Formance habits): an entry is an immutable list of postings that sums
 * to exactly zero per currency; a correction is a new entry, never an update. Amounts are signed
 * and credit-natural: a positive posting increases what the account holds (for a shop's
 * `available`, what the service owes the shop).
 */
import { CURRENCY_SCALE, Money, type Currency } from "@pgw/contracts";
import type Decimal from "decimal.js";
import { createHash } from "node:crypto";

/** shop_id of the system accounts. */
export const SYSTEM_SHOP_ID = "00000000-0000-0000-0000-000000000000";

/** Accounts every shop has per currency. */
export type ShopAccountKind = "available" | "reserved";
/** Accounts of the service itself (shop_id = {@link SYSTEM_SHOP_ID}). */
export type SystemAccountKind = "provider_clearing" | "commission_revenue" | "fx_conversion" | "manual_adjustments";
export type AccountKind = ShopAccountKind | SystemAccountKind;

/** One account: (shop, kind, currency). */
export interface AccountRef {
  shopId: string;
  kind: AccountKind;
  currency: Currency;
}

export const shopAccount = (shopId: string, kind: ShopAccountKind, currency: Currency): AccountRef => ({ shopId, kind, currency });
export const systemAccount = (kind: SystemAccountKind, currency: Currency): AccountRef => ({ shopId: SYSTEM_SHOP_ID, kind, currency });

/** Stable text key of an account, e.g. for maps (an account row read back keys as its reference). */
export const accountKey = (a: { shopId: string; kind: string; currency: string }) => `${a.shopId}|${a.kind}|${a.currency}`;

/** A signed amount on one account, in that account's currency. */
export interface Posting {
  account: AccountRef;
  amount: Decimal;
}

export type EntryKind = "reserve" | "release" | "payment_completed" | "payout_completed" | "adjustment";

/** An entry before it is written. */
export interface EntryDraft {
  /** Idempotency key: operation id + transition (`reserve:<id>`, `complete:<id>`, …) or `adjust:<key>`. */
  source: string;
  kind: EntryKind;
  /** The shop the entry is about. */
  shopId: string;
  reason: string;
  actor: string;
  postings: Posting[];
}

/** A journal rule broken by the code that built an entry (a bug, never a caller's mistake). */
export class JournalRuleViolation extends Error {}

/** Sum of the postings per currency. */
export function sumsByCurrency(postings: readonly Posting[]): Map<Currency, Decimal> {
  const sums = new Map<Currency, Decimal>();
  for (const p of postings) sums.set(p.account.currency, (sums.get(p.account.currency) ?? new Money(0)).plus(p.amount));
  return sums;
}

/**
 * Checks an entry before it is written and returns its postings without zero amounts: every
 * amount is exact at its currency's scale, the postings sum to zero per currency, and at least
 * one posting moves money. Throws {@link JournalRuleViolation} otherwise.
 */
export function checkEntry(draft: EntryDraft): Posting[] {
  for (const p of draft.postings) {
    if (p.amount.decimalPlaces() > CURRENCY_SCALE[p.account.currency]) {
      throw new JournalRuleViolation(`${draft.source}: ${p.amount.toFixed()} ${p.account.currency} exceeds the currency scale`);
    }
  }
  for (const [currency, sum] of sumsByCurrency(draft.postings)) {
    if (!sum.isZero()) throw new JournalRuleViolation(`${draft.source}: postings sum to ${sum.toFixed()} ${currency}, not zero`);
  }
  const moving = draft.postings.filter((p) => !p.amount.isZero());
  if (moving.length === 0) throw new JournalRuleViolation(`${draft.source}: an entry must move money`);
  return moving;
}

/**
 * Applies postings in order to the accounts' balances before them (by {@link accountKey}):
 * `after[i]` is posting i's account balance once it is applied (a posting's balance_after), and
 * `final` every touched account's balance at the end.
 */
export function runningBalances(before: ReadonlyMap<string, Decimal>, postings: readonly Posting[]): { after: Decimal[]; final: Map<string, Decimal> } {
  const final = new Map<string, Decimal>();
  const after = postings.map((p) => {
    const key = accountKey(p.account);
    const balance = (final.get(key) ?? before.get(key) ?? new Money(0)).plus(p.amount);
    final.set(key, balance);
    return balance;
  });
  return { after, final };
}

/**
 * sha256 of what an entry says (kind, shop, reason, postings in a canonical order): a second
 * attempt with the same source but other content is told apart from a plain repeat.
 */
export function fingerprint(draft: EntryDraft, postings: readonly Posting[]): string {
  const lines = postings.map((p) => `${accountKey(p.account)}|${p.amount.toFixed(CURRENCY_SCALE[p.account.currency])}`).sort();
  return createHash("sha256").update([draft.kind, draft.shopId, draft.reason, ...lines].join("\n")).digest("hex");
}
