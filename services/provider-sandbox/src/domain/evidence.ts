import { Money } from "@pgw/contracts";
import type { EvidenceMode } from "./scenario";

/** One receipt of a leg. */
export interface PlannedItem {
  id: string;
  amount: Money;
  completedAt: Date;
}

/** One physical leg of a paid or settled operation. */
export interface PlannedLeg {
  id: string;
  position: number;
  amount: Money;
  /** A synthetic legacy contribution: no items, no receipt. */
  legacy: boolean;
  completedAt: Date;
  items: PlannedItem[];
}

/** A leg of at least this much is reported as two transfers (two receipts). */
export const SPLIT_FROM = new Money("1000.00");
/** Time between the completion of two consecutive legs. */
const LEG_SPACING_MS = 60_000;

/**
 * The legs a total is paid in: `legs` when given (they must add up exactly to `total`), else the
 * total as one leg. Null when the legs do not add up.
 */
export function legsOf(total: Money, legs?: Money[]): Money[] | null {
  if (!legs) return [total];
  const sum = legs.reduce((acc, leg) => acc.plus(leg), new Money(0));
  return sum.eq(total) ? legs : null;
}

/**
 * The amounts of a leg's receipts: two (half rounded down to the cent, and the rest) from
 * {@link SPLIT_FROM} on, else one; they always add up to the leg.
 */
export function splitLeg(amount: Money): Money[] {
  if (amount.lt(SPLIT_FROM)) return [amount];
  const first = amount.div(2).toDecimalPlaces(2, Money.ROUND_DOWN);
  return [first, amount.minus(first)];
}

/**
 * The evidence a provider reports for `legs` of an operation created at `createdAt` and completed by
 * `now`: every leg with its receipts, the last leg completed at `now` and each earlier one a minute
 * before the next, or closer when the operation is younger (no leg completes before it was created).
 * In `legacy` mode the first leg is a legacy contribution without items. `unavailable` and `late`
 * are decided when evidence is asked for, so they plan complete evidence.
 */
export function planEvidence(mode: EvidenceMode, legs: Money[], span: { createdAt: Date; now: Date }, newId: () => string): PlannedLeg[] {
  const { createdAt, now } = span;
  const spacing = legs.length > 1 ? Math.min(LEG_SPACING_MS, Math.max(0, Math.floor((now.getTime() - createdAt.getTime()) / (legs.length - 1)))) : 0;
  return legs.map((amount, position) => {
    const completedAt = new Date(now.getTime() - (legs.length - 1 - position) * spacing);
    const legacy = mode === "legacy" && position === 0;
    const items = legacy ? [] : splitLeg(amount).map((part) => ({ id: newId(), amount: part, completedAt }));
    return { id: newId(), position, amount, legacy, completedAt, items };
  });
}
