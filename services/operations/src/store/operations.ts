/**
 * Every statement on the `operations` table: one statement (or one short transaction) each, on
 * Kysely, typed by the generated schema. A row comes back as stored: `number`, `destNumber` and
 * `requestHash` sealed (kit data-keys.ts).
 */
import { isUuid, Money } from "@pgw/contracts";
import { preferPlainIndexScan } from "@pgw/kit/db";
import { changeWithEvent, type OutboxEvent } from "@pgw/kit/events";
import { sql, type ExpressionBuilder, type Selectable, type Updateable } from "kysely";
import { createHash, randomUUID } from "node:crypto";
import type { CreateCommand } from "../domain/create-rules";
import type { DB, Operation, Shop } from "../generated/kysely/database";
import type { Sql, Tx } from "./db";
import { afterCursor, type Page } from "./paging";

/** An operation as stored. */
export type OperationRow = Selectable<Operation>;

/** How an operation is looked up within a shop. */
export type OperationKey = { operationId: string } | { merchantOperationId: string };

/**
 * What identifies a merchant_operation_id within its shop: its sha256. The key may be any non-empty
 * string (docs/api.md, Idempotency), longer than a btree index entry can hold.
 */
export const operationKeyHash = (merchantOperationId: string): Buffer => createHash("sha256").update(merchantOperationId, "utf8").digest();

const keyIs = (key: OperationKey) => (eb: ExpressionBuilder<DB, "operations">) =>
  "operationId" in key ? eb("id", "=", key.operationId) : eb("merchantOperationKey", "=", operationKeyHash(key.merchantOperationId));

/** The operation of a shop by either key (one indexed read). */
export async function findOperation(db: Sql | Tx, shopId: string, key: OperationKey): Promise<OperationRow | null> {
  return (await db.selectFrom("operations").selectAll().where("shopId", "=", shopId).where(keyIs(key)).executeTakeFirst()) ?? null;
}

/** An operation of any shop by its id. */
export async function findOperationById(db: Sql | Tx, id: string): Promise<OperationRow | null> {
  return (await db.selectFrom("operations").selectAll().where("id", "=", id).executeTakeFirst()) ?? null;
}

/** Locks the operation row for the rest of the transaction (FOR UPDATE) and reads it; any shop when `shopId` is null. */
export async function lockOperation(tx: Tx, shopId: string | null, key: OperationKey): Promise<OperationRow | null> {
  const row = await tx
    .selectFrom("operations")
    .selectAll()
    .$if(shopId !== null, (qb) => qb.where("shopId", "=", shopId!))
    .where(keyIs(key))
    .forUpdate()
    .executeTakeFirst();
  return row ?? null;
}

/**
 * Bounds how long the rest of transaction `tx` waits for a row lock (Postgres `lock_timeout`, as
 * `SET LOCAL` sets it), so a decision that cannot be made in time fails instead of waiting.
 */
export async function limitLockWait(tx: Tx, ms: number): Promise<void> {
  await sql`SELECT set_config('lock_timeout', ${`${Math.round(ms)}ms`}, true)`.execute(tx);
}

/** What a create needs of its shop. */
export type CreateShop = Pick<Selectable<Shop>, "id" | "merchantId" | "settlementCurrency" | "overdraftLimit" | "checkoutEnabled">;

/** The shop settings a create needs (and the checkout page's flag). */
export async function findCreateShop(db: Sql | Tx, shopId: string): Promise<CreateShop | null> {
  const shop = await db.selectFrom("shops").select(["id", "merchantId", "settlementCurrency", "overdraftLimit", "checkoutEnabled"]).where("id", "=", shopId).executeTakeFirst();
  return shop ?? null;
}

/** What a create stores sealed: the request's hash and the payout's destination number. */
export interface SealedCreate {
  requestHash: string;
  destNumber: string | null;
}

/** The request's own columns of a `creating` row (the shop supplies shop, merchant and settlement currency). */
function creatingValues(cmd: CreateCommand, sealed: SealedCreate) {
  return {
    merchantOperationId: cmd.merchantOperationId,
    requestHash: sealed.requestHash,
    type: cmd.type,
    status: "creating",
    method: cmd.method,
    currency: cmd.currency,
    expectedAmount: cmd.amount,
    clientId: cmd.clientId,
    clientIp: cmd.clientIp ?? null,
    destNumber: sealed.destNumber,
    destName: cmd.destination?.name ?? null,
    destBankname: cmd.destination?.bankname ?? null,
    merchantOperationKey: operationKeyHash(cmd.merchantOperationId),
  };
}

type OwnColumn = keyof ReturnType<typeof creatingValues>;
/** The request's columns of types other than text. */
const NON_TEXT = { expectedAmount: "numeric", merchantOperationKey: "bytea" } as const satisfies Partial<Record<OwnColumn, string>>;

/**
 * A create's first claim: reads the shop and, if it exists, claims (shop, merchant_operation_id)
 * with a row in the internal `creating` state, in one statement. `claimed` is null when another
 * create holds the key (the unique constraint decides, no read-modify-write); both are null when
 * the shop does not exist.
 */
export async function claimInShop(db: Sql, shopId: string, cmd: CreateCommand, sealed: SealedCreate): Promise<{ shop: CreateShop | null; claimed: OperationRow | null }> {
  const own = Object.entries(creatingValues(cmd, sealed)) as [OwnColumn, unknown][];
  const row = await db
    .with("s", (qc) => qc.selectFrom("shops").select(["id", "merchantId", "settlementCurrency", "overdraftLimit", "checkoutEnabled"]).where("id", "=", shopId))
    .with("claimed", (qc) =>
      qc
        .insertInto("operations")
        .columns(["id", "shopId", "merchantId", "settlementCurrency", ...own.map(([column]) => column)])
        .expression(
          qc.selectFrom("s").select((eb) => [
            eb.cast<string>(eb.val(randomUUID()), "uuid").as("id"),
            "s.id as shopId",
            "s.merchantId",
            "s.settlementCurrency",
            // A parameter in a SELECT list is text unless cast: those of other columns are.
            ...own.map(([column, value]) => {
              const type = NON_TEXT[column as keyof typeof NON_TEXT];
              return (type ? eb.cast(eb.val(value), type) : eb.val(value)).as(column);
            }),
          ]),
        )
        .onConflict((oc) => oc.columns(["shopId", "merchantOperationKey"]).doNothing())
        .returningAll(),
    )
    .selectFrom("s")
    .leftJoin("claimed", (join) => join.onTrue())
    .selectAll("claimed")
    // The shop's columns under names of their own: the claimed row has an id, a merchant id and a settlement currency too.
    .select(["s.id as sId", "s.merchantId as sMerchantId", "s.settlementCurrency as sSettlementCurrency", "s.overdraftLimit as sOverdraftLimit", "s.checkoutEnabled as sCheckoutEnabled"])
    .executeTakeFirst();
  if (!row) return { shop: null, claimed: null };
  const { sId, sMerchantId, sSettlementCurrency, sOverdraftLimit, sCheckoutEnabled, ...claimed } = row;
  const shop = { id: sId, merchantId: sMerchantId, settlementCurrency: sSettlementCurrency, overdraftLimit: sOverdraftLimit, checkoutEnabled: sCheckoutEnabled };
  return { shop, claimed: claimed.id === null ? null : (claimed as OperationRow) };
}

/**
 * Claims (shop, merchant_operation_id) with a row in the internal `creating` state; answers null
 * when another create holds the key (the unique constraint decides, no read-modify-write).
 */
export async function insertCreating(db: Sql, cmd: CreateCommand, shop: Pick<CreateShop, "id" | "merchantId" | "settlementCurrency">, sealed: SealedCreate): Promise<OperationRow | null> {
  const row = await db
    .insertInto("operations")
    .values({ id: randomUUID(), shopId: shop.id, merchantId: shop.merchantId, settlementCurrency: shop.settlementCurrency, ...creatingValues(cmd, sealed) })
    .onConflict((oc) => oc.columns(["shopId", "merchantOperationKey"]).doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

/** Columns a transition may change. */
type Changeable =
  | "status"
  | "actualAmount"
  | "number"
  | "holderName"
  | "bankname"
  | "requiresReceipt"
  | "fxSource"
  | "fxRate"
  | "settlementCurrency"
  | "settlementAmount"
  | "commissionAmount"
  | "recordedCurrency"
  | "recordedAmount"
  | "tariffPercent"
  | "tariffFixed"
  | "tariffMinimum"
  | "manualCheckReason"
  | "providerReportedAmount"
  | "providerUpdatesApplied"
  | "allocationId";

/** A change to an operation: NUMERIC columns as decimal strings that fit their scale, times as Date. */
export type OperationChange = Pick<Updateable<Operation>, Changeable> & { expiresAt?: Date | null };

/** The NUMERIC columns a change may set (every one: the compiler checks), read back as decimals. */
const NUMERIC: Record<{ [K in Changeable]: OperationRow[K] extends Money | null ? K : never }[Changeable], true> = {
  actualAmount: true,
  fxRate: true,
  settlementAmount: true,
  commissionAmount: true,
  recordedAmount: true,
  tariffPercent: true,
  tariffFixed: true,
  tariffMinimum: true,
  providerReportedAmount: true,
};

/**
 * The UPDATE writing a change where `condition` holds and returning the row as stored; updated_at
 * moves to `updatedAt`, or to the database's clock.
 */
function operationUpdate(db: Sql | Tx, id: string, change: OperationChange, condition: { status?: string }, updatedAt?: Date) {
  return db
    .updateTable("operations")
    .set({ ...change, updatedAt: updatedAt ?? sql<Date>`clock_timestamp()` })
    .where("id", "=", id)
    .$if(condition.status !== undefined, (qb) => qb.where("status", "=", condition.status!))
    .returningAll();
}

/**
 * `row` as {@link operationUpdate} stores it with `change` at `updatedAt`, known before the
 * statement runs: what an event written by that same statement carries. Values must already fit
 * their columns (NUMERIC scales), as the ledger's and routing's figures do, or the row stored would
 * be rounded where this one is not.
 */
export function changedOperation(row: OperationRow, change: OperationChange, updatedAt: Date): OperationRow {
  const changed: Record<string, unknown> = { ...row, updatedAt };
  for (const [field, value] of Object.entries(change)) {
    if (value === undefined) continue;
    changed[field] = value !== null && Object.hasOwn(NUMERIC, field) ? new Money(value as string) : value instanceof Date ? new Date(value) : value;
  }
  return changed as OperationRow;
}

/**
 * Writes a change only while the operation is still in `status` (compare and set: no lock, no read
 * first), in one statement with the event that `event` makes of the row as it will be stored (see
 * {@link changedOperation}); answers the row as stored, or null (and no event) when it has moved on.
 */
export function updateOperationFromWithEvent(db: Sql, row: OperationRow, status: string, change: OperationChange, event: (changed: OperationRow) => OutboxEvent): Promise<OperationRow | null> {
  return changeOperationWithEvent(db, row, change, { status }, event);
}

/**
 * Writes a change to an operation locked in `tx`, in one statement with the event that `event`
 * makes of the row as it will be stored (see {@link changedOperation}); answers the row as stored.
 */
export async function updateOperationWithEvent(tx: Tx, row: OperationRow, change: OperationChange, event: (changed: OperationRow) => OutboxEvent): Promise<OperationRow> {
  const stored = await changeOperationWithEvent(tx, row, change, {}, event);
  if (!stored) throw new Error(`operation ${row.id} vanished inside its own transaction`);
  return stored;
}

async function changeOperationWithEvent(db: Sql | Tx, row: OperationRow, change: OperationChange, condition: { status?: string }, event: (changed: OperationRow) => OutboxEvent): Promise<OperationRow | null> {
  // Never before the row's last change, whatever the application's clock says against the database's.
  const updatedAt = new Date(Math.max(Date.now(), row.updatedAt.getTime()));
  const [stored] = await changeWithEvent(db, operationUpdate(db, row.id, change, condition, updatedAt), event(changedOperation(row, change, updatedAt)));
  return stored ?? null;
}

/** Writes a change to an operation locked in `tx` and answers the row as stored. */
export async function updateOperation(tx: Tx, id: string, change: OperationChange): Promise<OperationRow> {
  const row = await operationUpdate(tx, id, change, {}).executeTakeFirst();
  if (!row) throw new Error(`operation ${id} vanished inside its own transaction`);
  return row;
}

/**
 * Records that the provider's updates of a row locked in `tx` are applied up to `sequence`, for an
 * update that changed nothing else: the row's `updatedAt` stays, since the operation did not change.
 */
export async function markProviderUpdatesApplied(tx: Tx, id: string, sequence: number): Promise<void> {
  await tx.updateTable("operations").set({ providerUpdatesApplied: sequence }).where("id", "=", id).execute();
}

/** Gives the key back after a create that nothing accepted (only while still `creating`). */
export async function releaseCreating(db: Sql, id: string): Promise<boolean> {
  const { numDeletedRows } = await db.deleteFrom("operations").where("id", "=", id).where("status", "=", "creating").executeTakeFirst();
  return numDeletedRows === 1n;
}

/** Ids of creates still `creating` since before `before` (their process died mid-flight). */
export async function abandonedCreates(db: Sql, before: Date): Promise<string[]> {
  const rows = await db.$transaction(async (tx) => {
    await preferPlainIndexScan(tx); // every create leaves `creating`: the status index is full of stale entries
    return tx.selectFrom("operations").select("id").where("status", "=", "creating").where("createdAt", "<", before).execute();
  });
  return rows.map((r) => r.id);
}

/** What the admin listing filters on; `query` is an operation_id or a merchant_operation_id. */
export interface OperationFilter {
  shopId?: string;
  status?: string;
  query?: string;
  createdFrom?: Date;
  createdTo?: Date;
}

/** The admin listing: operations of a shop or every shop matching `filter`, any status but `creating`, newest first. */
export function listOperations(db: Sql, filter: OperationFilter, page: Page): Promise<OperationRow[]> {
  const { query } = filter;
  return db
    .selectFrom("operations")
    .selectAll()
    .$if(filter.shopId !== undefined, (qb) => qb.where("shopId", "=", filter.shopId!))
    .where("status", filter.status === undefined ? "<>" : "=", filter.status ?? "creating")
    .$if(query !== undefined, (qb) =>
      qb.where((eb) => eb.or([...(isUuid(query!) ? [eb("id", "=", query!.toLowerCase())] : []), eb("merchantOperationKey", "=", operationKeyHash(query!))])),
    )
    .$if(filter.createdFrom !== undefined, (qb) => qb.where("createdAt", ">=", filter.createdFrom!))
    .$if(filter.createdTo !== undefined, (qb) => qb.where("createdAt", "<", filter.createdTo!))
    .$if(page.after !== null, (qb) => qb.where(afterCursor<"operations">(page.after!)))
    .orderBy("createdAt", "desc")
    .orderBy("id", "desc")
    .limit(page.limit)
    .execute();
}
