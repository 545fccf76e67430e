/**
 * Payout reserves as the rules see them: what a reserve answers for, and when a repeated Reserve
 * of the same operation may answer at all. store/reserves.ts holds and moves them.
 */
import { AppError, type Currency, type Quote } from "@pgw/contracts";
import type Decimal from "decimal.js";

/**
 * held → consumed (payout completed) | released (declined, expired, cancelled, ReleaseReserve).
 * void: a release arrived before any reserve (a tombstone, so that a late Reserve moves nothing).
 */
export type ReserveStatus = "held" | "consumed" | "released" | "void";

/** A payout's reserve: what it holds, for which shop, and in which state. */
export interface PayoutReserve {
  shopId: string;
  /** The settlement currency. */
  currency: Currency;
  /** The payout amount in the settlement currency. */
  amount: Decimal;
  commission: Decimal;
  status: ReserveStatus;
}

/** The figures a reserve stands for, as the payout quote that made it. */
export function quoteOfReserve(r: PayoutReserve): Quote {
  return { recorded: r.amount, commission: r.commission, settlement: r.amount.plus(r.commission), settlementCurrency: r.currency };
}

/** Why a Reserve of an operation whose reserve exists cannot answer it; null when it can. */
export function repeatRefusal(existing: PayoutReserve, wanted: PayoutReserve): AppError | null {
  if (existing.status === "void") return new AppError("invalid_state", "the payout's reserve was released before it was made");
  if (existing.shopId !== wanted.shopId) return new AppError("idempotency_conflict", "operation_id was reserved for another shop");
  const sameFigures = existing.currency === wanted.currency && existing.amount.eq(wanted.amount) && existing.commission.eq(wanted.commission);
  if (!sameFigures) return new AppError("idempotency_conflict", "operation_id was reserved with other figures");
  // Answering the figures of a reserve no longer held would tell the caller money is held that is not.
  if (existing.status !== "held") return new AppError("invalid_state", `the payout's reserve was already ${existing.status}`);
  return null;
}
