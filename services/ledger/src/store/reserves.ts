/**
 * Payout reserves: held at create (available → reserved), consumed at completion, released on
 * decline, expiry or cancel. Each function runs inside the caller's transaction.
 */
import { AppError, Money, type KitLog, type SqlClient } from "@pgw/kit";
import type Decimal from "decimal.js";
import { exceedsOverdraft } from "../domain/balances";
import { payoutCompletedPostings, releasePostings, reservePostings, type Capture } from "../domain/flows";
import { accountKey, shopAccount } from "../domain/journal";
import type { Quote } from "../domain/tariff";
import { postEntry, type PostedEntry } from "./journal";
import { claimReserve, lockReserve, setReserveStatus, voidReserve, type ReserveRow } from "./accounts";

/** The figures a reserve row stands for, as the payout quote that made it. */
export function quoteOfReserve(r: ReserveRow): Quote {
  return { recorded: r.amount, commission: r.commission, settlement: r.amount.plus(r.commission), settlementCurrency: r.currency };
}

/** Why a Reserve of an operation whose reserve row exists cannot answer it; null when it can. */
function repeatRefusal(existing: ReserveRow, wanted: ReserveRow): AppError | null {
  if (existing.status === "void") return new AppError("invalid_state", "the payout's reserve was released before it was made");
  if (existing.shopId !== wanted.shopId) return new AppError("idempotency_conflict", "operation_id was reserved for another shop");
  const sameFigures = existing.currency === wanted.currency && existing.amount.eq(wanted.amount) && existing.commission.eq(wanted.commission);
  if (!sameFigures) return new AppError("idempotency_conflict", "operation_id was reserved with other figures");
  // Answering the figures of a reserve no longer held would tell the caller money is held that is not.
  if (existing.status !== "held") return new AppError("invalid_state", `the payout's reserve was already ${existing.status}`);
  return null;
}

/**
 * Reserves a payout's total (`quote.settlement`: amount + commission in the settlement currency)
 * under a row lock on the shop's available account. Idempotent by operation id: a repeat with the
 * same figures answers the held reserve and moves nothing.
 *
 * Errors: insufficient_balance (available − total < −overdraft_limit); idempotency_conflict (the
 * operation id was reserved for another shop or with other figures); invalid_state (the
 * operation's reserve was released before it arrived, or is no longer held).
 */
export async function reservePayout(tx: SqlClient, shopId: string, operationId: string, quote: Quote, overdraftLimit: Decimal): Promise<Quote> {
  const currency = quote.settlementCurrency;
  const row: ReserveRow = { operationId, shopId, currency, amount: quote.recorded, commission: quote.commission, status: "held" };
  if (!(await claimReserve(tx, row))) {
    const existing = (await lockReserve(tx, operationId))!;
    const refusal = repeatRefusal(existing, row);
    if (refusal) throw refusal;
    return quoteOfReserve(existing);
  }
  const available = accountKey(shopAccount(shopId, "available", currency));
  const draft = { source: `reserve:${operationId}`, kind: "reserve", shopId, reason: "payout reserve", actor: "rpc:Reserve" } as const;
  await postEntry(tx, { ...draft, postings: reservePostings(shopId, currency, quote.settlement) }, (locked) => {
    if (exceedsOverdraft(locked.get(available)!, quote.settlement, overdraftLimit)) {
      throw new AppError("insufficient_balance", "the shop's balance does not cover the payout and its commission");
    }
  });
  return quote;
}

/**
 * Returns a held reserve to available (source `release:<operation_id>`); true when it did. No-op
 * when the reserve was consumed or released already; when there is none yet, a tombstone makes a
 * late Reserve of the operation move nothing.
 */
export async function releaseReserve(tx: SqlClient, operationId: string, why: { reason: string; actor: string }): Promise<boolean> {
  if (await voidReserve(tx, operationId)) return false;
  const r = await lockReserve(tx, operationId);
  if (r?.status !== "held") return false;
  const postings = releasePostings(r.shopId, r.currency, r.amount.plus(r.commission));
  await postEntry(tx, { source: `release:${operationId}`, kind: "release", shopId: r.shopId, ...why, postings });
  await setReserveStatus(tx, operationId, "released");
  return true;
}

/**
 * Completes a payout (source `complete:<operation_id>`): the held reserve leaves reserved, the
 * captured figures go to clearing and commission, any difference returns to available. Without a
 * held reserve the charge comes from available (logged). A reserve for another shop or currency
 * than the capture is refused with an alert and nothing is posted.
 */
export async function completePayout(tx: SqlClient, operationId: string, capture: Capture, actor: string, log: KitLog): Promise<PostedEntry | null> {
  const r = await lockReserve(tx, operationId);
  const ctx = { operation_id: operationId, shop_id: capture.shopId };
  if (r?.status === "consumed") return null;
  const held = r?.status === "held" ? r : null;
  if (held && (held.shopId !== capture.shopId || held.currency !== capture.settlementCurrency)) {
    log.error({ ...ctx, alert: "ledger_garbage_event", reserve: { shop_id: held.shopId, currency: held.currency } }, "payout completion does not match its reserve; not posted");
    return null;
  }
  if (!held) log.warn({ ...ctx, reserve_status: r?.status ?? "none" }, "payout completed without a held reserve; charging available");
  const reserved = held ? held.amount.plus(held.commission) : new Money(0);
  const postings = payoutCompletedPostings(capture, reserved);
  const posted = await postEntry(tx, { source: `complete:${operationId}`, kind: "payout_completed", shopId: capture.shopId, reason: "payout completed", actor, postings });
  if (held) await setReserveStatus(tx, operationId, "consumed");
  return posted;
}
