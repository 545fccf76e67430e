/**
 * Payout reserves: held at create (available → reserved), consumed at completion, released on
 * decline, expiry or cancel. Each function runs inside the caller's transaction; the entries that
 * move a reserve's money are written by journal.ts's postEntry.
 */
import { AppError, formatAmount, Money, type Currency, type Quote } from "@pgw/contracts";
import { type KitLog } from "@pgw/kit/events";
import type Decimal from "decimal.js";
import { sql } from "kysely";
import { exceedsOverdraft } from "../domain/balances";
import { payoutCompletedPostings, releasePostings, reservePostings, type Capture } from "../domain/flows";
import { accountKey, shopAccount, SYSTEM_SHOP_ID } from "../domain/journal";
import { quoteOfReserve, repeatRefusal, type PayoutReserve, type ReserveStatus } from "../domain/reserve";
import type { Db, Tx } from "./index";
import { postEntry, type PostedEntry } from "./journal";

/** Inserts the operation's reserve unless it has one; true when inserted. */
async function claimReserve(tx: Tx, operationId: string, r: PayoutReserve): Promise<boolean> {
  const { numInsertedOrUpdatedRows } = await tx
    .insertInto("reserves")
    .values({
      operationId,
      shopId: r.shopId,
      currency: r.currency,
      amount: formatAmount(r.amount, r.currency),
      commission: formatAmount(r.commission, r.currency),
      status: r.status,
    })
    .onConflict((oc) => oc.column("operationId").doNothing())
    .executeTakeFirstOrThrow();
  return numInsertedOrUpdatedRows! > 0n;
}

/** The operation's reserve, locked until the transaction ends; undefined when there is none. */
function lockReserve(tx: Tx, operationId: string) {
  return tx
    .selectFrom("reserves")
    .select(["shopId", "currency", "amount", "commission", "status"])
    .where("operationId", "=", operationId)
    .forUpdate()
    .$narrowType<{ currency: Currency; status: ReserveStatus }>()
    .executeTakeFirst();
}

async function setReserveStatus(tx: Tx, operationId: string, status: ReserveStatus): Promise<void> {
  await tx.updateTable("reserves").set({ status, updatedAt: sql`now()` }).where("operationId", "=", operationId).execute();
}

/**
 * Records that the operation's reserve was released before any reserve existed (status void),
 * unless it has a reserve row already; true when the tombstone was written. A Reserve that arrives
 * later (its caller gave up waiting and compensated) then moves nothing.
 */
async function voidReserve(tx: Tx, operationId: string): Promise<boolean> {
  const { numInsertedOrUpdatedRows } = await tx
    .insertInto("reserves")
    .values({ operationId, shopId: SYSTEM_SHOP_ID, currency: "", amount: "0", commission: "0", status: "void" satisfies ReserveStatus })
    .onConflict((oc) => oc.column("operationId").doNothing())
    .executeTakeFirstOrThrow();
  return numInsertedOrUpdatedRows! > 0n;
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
export async function reservePayout(tx: Tx, shopId: string, operationId: string, quote: Quote, overdraftLimit: Decimal): Promise<Quote> {
  const currency = quote.settlementCurrency;
  const wanted: PayoutReserve = { shopId, currency, amount: quote.recorded, commission: quote.commission, status: "held" };
  if (!(await claimReserve(tx, operationId, wanted))) {
    const existing = (await lockReserve(tx, operationId))!;
    const refusal = repeatRefusal(existing, wanted);
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
export async function releaseReserve(tx: Tx, operationId: string, why: { reason: string; actor: string }): Promise<boolean> {
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
export async function completePayout(tx: Tx, operationId: string, capture: Capture, actor: string, log: KitLog): Promise<PostedEntry | null> {
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

/** Where the orphan sweep stopped: the last reserve it looked at. */
export interface ReserveCursor {
  createdAt: Date;
  operationId: string;
}

const NO_CURSOR: ReserveCursor = { createdAt: new Date(0), operationId: "00000000-0000-0000-0000-000000000000" };

/** Reserves still held that were made before `before`, oldest first from after `after` (the orphan sweep's candidates). */
export function heldReservesBefore(db: Db, before: Date, after: ReserveCursor | null, limit: number) {
  return heldReservesQuery(db, before, after, limit).execute();
}

/** The statement of {@link heldReservesBefore} (test/store.test.ts checks that its plan can use reserves_held_idx). */
export function heldReservesQuery(db: Db, before: Date, after: ReserveCursor | null, limit: number) {
  const from = after ?? NO_CURSOR;
  return (
    db
      .selectFrom("reserves")
      .select(["operationId", "shopId", "createdAt"])
      // A literal, not a parameter: the statement is prepared, and only a plan that knows the status
      // is 'held' can use the partial index reserves_held_idx (created_at) WHERE status = 'held'.
      .where("status", "=", sql.lit("held"))
      .where("createdAt", "<", before)
      .where((eb) => eb(eb.refTuple("createdAt", "operationId"), ">", eb.tuple(from.createdAt, from.operationId)))
      .orderBy("createdAt")
      .orderBy("operationId")
      .limit(limit)
  );
}

/** How many reserves are held (the partial index reserves_held_idx answers it, as for the sweep). */
export async function countHeldReserves(db: Db): Promise<number> {
  const row = await db.selectFrom("reserves").select((eb) => eb.fn.countAll<string>().as("n")).where("status", "=", sql.lit("held")).executeTakeFirstOrThrow();
  return Number(row.n);
}
