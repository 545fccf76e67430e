/**
 * A completion's figures from the tariff its create was quoted with: the ledger's own rule
 * (`quote` in @pgw/contracts) applied to the captured amount, so the completion needs no call to
 * the ledger and a tariff changed since the create does not reach the operation.
 */
import { figuresByTariff, Money, type Tariff } from "@pgw/contracts";
import type Decimal from "decimal.js";

/** What a completion is settled from, as operations stores it. */
export interface SettlingOperation {
  id: string;
  type: string;
  currency: string;
  settlementCurrency: string | null;
  fxRate: Decimal | null;
  tariffPercent: Decimal | null;
  tariffFixed: Decimal | null;
  tariffMinimum: Decimal | null;
}

/** The tariff the create was quoted with; null for an operation created before it was kept. */
export function storedTariff(op: SettlingOperation): Tariff | null {
  const { tariffPercent: percent, tariffFixed: fixed, tariffMinimum: minimum } = op;
  return percent && fixed && minimum ? { percent, fixed, minimum } : null;
}

/**
 * Recorded amount, commission and settlement of `actual` (the captured amount, at its currency's
 * scale) with the stored tariff and fx rate, at the settlement currency's scale: the figures the
 * ledger's Quote answers for the same tariff. Null when the operation has no stored tariff.
 */
export function completionFigures(op: SettlingOperation, actual: string): ReturnType<typeof figuresByTariff> {
  const tariff = storedTariff(op);
  if (!tariff) return null;
  if (op.type !== "payment" && op.type !== "payout") throw new Error(`operation ${op.id} has type ${op.type}, which no tariff settles`);
  const settlementCurrency = op.settlementCurrency ?? op.currency;
  const figures = figuresByTariff({ type: op.type, tariff, amount: new Money(actual), currency: op.currency, settlementCurrency, fxRate: op.fxRate ?? undefined });
  if (!figures) throw new Error(`operation ${op.id} is in ${op.currency} settled in ${settlementCurrency}, which no tariff settles`);
  return figures;
}
