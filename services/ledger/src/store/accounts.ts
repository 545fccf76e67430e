import { Money, type Currency, type DbClient, type SqlClient } from "@pgw/kit";
import type Decimal from "decimal.js";
import type { AccountReading } from "../domain/balances";
import type { OperationKind, Tariff } from "../domain/tariff";

/**
 * Every ledger access is SQL on the kit's pg pool (prisma/schema.prisma describes the tables; the
 * unit opens no Prisma client). Prisma's client fits this type too.
 */
export type Db = DbClient;

/**
 * Runs `fn` in one READ COMMITTED transaction. Writers queue on the row locks of a shop's
 * accounts, so the pool wait and the transaction timeout are generous.
 */
export function inTransaction<R>(db: Db, fn: (tx: SqlClient) => Promise<R>): Promise<R> {
  return db.$transaction((tx) => fn(tx), { maxWait: 10_000, timeout: 15_000 });
}

/**
 * The shop's available and reserved accounts with their journal sums, in one statement: one
 * snapshot (a statement sees one snapshot even under READ COMMITTED, as a REPEATABLE READ
 * transaction would) and one round trip. The journal sum of an account is the running sum its
 * latest posting carries (balance_after), one probe of postings(account_id, id) whatever the
 * account's history; adding up every posting instead grows with it (about 15 ms at 100,000
 * postings), and is what Reconcile does, chain included.
 */
export async function readShopAccounts(db: SqlClient, shopId: string): Promise<AccountReading[]> {
  const rows = await db.$queryRawUnsafe<{ kind: "available" | "reserved"; currency: string; balance: string; journal: string }[]>(
    `SELECT a."kind", a."currency", a."balance"::text AS balance,
            COALESCE((SELECT p."balance_after" FROM "postings" p WHERE p."account_id" = a."id" ORDER BY p."id" DESC LIMIT 1), 0)::text AS journal
     FROM "accounts" a WHERE a."shop_id" = $1::uuid AND a."kind" IN ('available', 'reserved')`,
    shopId,
  );
  return rows.map((r) => ({ kind: r.kind, currency: r.currency, balance: new Money(r.balance), journal: new Money(r.journal) }));
}

/** The shop's own tariff, else the default one (shop_id NULL); null when neither exists. */
export async function findTariff(db: SqlClient, shopId: string, type: OperationKind, method: string, currency: Currency): Promise<Tariff | null> {
  const [row] = await db.$queryRawUnsafe<{ percent: string; fixed: string; minimum: string }[]>(
    `SELECT "percent"::text, "fixed"::text, "minimum"::text FROM "tariffs"
     WHERE ("shop_id" = $1::uuid OR "shop_id" IS NULL) AND "type" = $2 AND "method" = $3 AND "currency" = $4
     ORDER BY "shop_id" NULLS LAST LIMIT 1`,
    shopId,
    type,
    method,
    currency,
  );
  return row ? { percent: new Money(row.percent), fixed: new Money(row.fixed), minimum: new Money(row.minimum) } : null;
}

/**
 * held → consumed (payout completed) | released (declined, expired, cancelled, ReleaseReserve).
 * void: a release arrived before any reserve (a tombstone, so that a late Reserve moves nothing).
 */
export type ReserveStatus = "held" | "consumed" | "released" | "void";

export interface ReserveRow {
  operationId: string;
  shopId: string;
  /** The settlement currency. */
  currency: Currency;
  /** The payout amount in the settlement currency. */
  amount: Decimal;
  commission: Decimal;
  status: ReserveStatus;
}

/** Inserts a reserve row unless the operation has one; true when inserted. */
export async function claimReserve(tx: SqlClient, r: ReserveRow): Promise<boolean> {
  const inserted = await tx.$executeRawUnsafe(
    `INSERT INTO "reserves" ("operation_id", "shop_id", "currency", "amount", "commission", "status")
     VALUES ($1::uuid, $2::uuid, $3, $4::numeric, $5::numeric, $6) ON CONFLICT ("operation_id") DO NOTHING`,
    r.operationId,
    r.shopId,
    r.currency,
    r.amount.toFixed(),
    r.commission.toFixed(),
    r.status,
  );
  return Number(inserted) > 0;
}

/** The operation's reserve row, locked until the transaction ends; null when there is none. */
export async function lockReserve(tx: SqlClient, operationId: string): Promise<ReserveRow | null> {
  const [row] = await tx.$queryRawUnsafe<{ shop_id: string; currency: Currency; amount: string; commission: string; status: ReserveStatus }[]>(
    `SELECT "shop_id"::text, "currency", "amount"::text, "commission"::text, "status" FROM "reserves" WHERE "operation_id" = $1::uuid FOR UPDATE`,
    operationId,
  );
  if (!row) return null;
  return { operationId, shopId: row.shop_id, currency: row.currency, amount: new Money(row.amount), commission: new Money(row.commission), status: row.status };
}

export async function setReserveStatus(tx: SqlClient, operationId: string, status: ReserveStatus): Promise<void> {
  await tx.$executeRawUnsafe(`UPDATE "reserves" SET "status" = $2, "updated_at" = now() WHERE "operation_id" = $1::uuid`, operationId, status);
}

/**
 * An account whose materialised balance differs from the sum of its postings, or whose postings'
 * running sums (balance_after) are not the sums of the postings up to them.
 */
export interface AccountMismatch {
  accountId: string;
  shopId: string;
  kind: string;
  currency: string;
  balance: string;
  journal: string;
  brokenChainAt: string | null;
}

/** A journal entry whose postings do not sum to zero in some currency. */
export interface UnbalancedEntry {
  entryId: string;
  currency: string;
  sum: string;
}

/** Every account against its whole journal, and every entry's sums, each read in one statement. */
export async function reconcileAccounts(db: SqlClient): Promise<{ checked: number; mismatches: AccountMismatch[]; unbalanced: UnbalancedEntry[] }> {
  const [{ checked, mismatches }] = await db.$queryRawUnsafe<{ checked: number; mismatches: AccountMismatch[] | null }[]>(
    `WITH r AS (SELECT "account_id", "id", "balance_after",
                       sum("amount") OVER (PARTITION BY "account_id" ORDER BY "id") AS running FROM "postings"),
          j AS (SELECT "account_id", max(running) FILTER (WHERE "id" = last_id) AS total,
                       min("id") FILTER (WHERE "balance_after" <> running) AS broken_at
                FROM (SELECT r.*, max("id") OVER (PARTITION BY "account_id") AS last_id FROM r) x GROUP BY "account_id"),
          c AS (SELECT a."id", a."shop_id", a."kind", a."currency", a."balance", COALESCE(j.total, 0) AS journal, j.broken_at
                FROM "accounts" a LEFT JOIN j ON j."account_id" = a."id")
     SELECT count(*)::int AS checked,
            json_agg(json_build_object('accountId', c."id", 'shopId', c."shop_id", 'kind', c."kind", 'currency', c."currency",
                                       'balance', c."balance"::text, 'journal', c.journal::text, 'brokenChainAt', c.broken_at::text))
              FILTER (WHERE c."balance" <> c.journal OR c.broken_at IS NOT NULL) AS mismatches
     FROM c`,
  );
  const unbalanced = await db.$queryRawUnsafe<UnbalancedEntry[]>(
    `SELECT "entry_id"::text AS "entryId", "currency", sum("amount")::text AS "sum" FROM "postings"
     GROUP BY "entry_id", "currency" HAVING sum("amount") <> 0`,
  );
  return { checked, mismatches: mismatches ?? [], unbalanced };
}

/**
 * Records that the operation's reserve was released before any reserve existed (status void),
 * unless it has a reserve row already; true when the tombstone was written. A Reserve that arrives
 * later (its caller gave up waiting and compensated) then moves nothing.
 */
export async function voidReserve(tx: SqlClient, operationId: string): Promise<boolean> {
  const inserted = await tx.$executeRawUnsafe(
    `INSERT INTO "reserves" ("operation_id", "shop_id", "currency", "amount", "commission", "status")
     VALUES ($1::uuid, '00000000-0000-0000-0000-000000000000', '', 0, 0, 'void') ON CONFLICT ("operation_id") DO NOTHING`,
    operationId,
  );
  return Number(inserted) > 0;
}

/** Where the orphan sweep stopped: the last reserve it looked at. */
export interface ReserveCursor {
  createdAt: Date;
  operationId: string;
}

/** Reserves still held that were made before `before`, oldest first from after `after` (the orphan sweep's candidates). */
export async function heldReservesBefore(
  db: SqlClient,
  before: Date,
  after: ReserveCursor | null,
  limit: number,
): Promise<({ shopId: string } & ReserveCursor)[]> {
  const rows = await db.$queryRawUnsafe<{ operation_id: string; shop_id: string; created_at: Date }[]>(
    `SELECT "operation_id"::text, "shop_id"::text, "created_at" FROM "reserves"
      WHERE "status" = 'held' AND "created_at" < $1 AND ("created_at", "operation_id") > ($2::timestamptz, $3::uuid)
      ORDER BY "created_at", "operation_id" LIMIT $4`,
    before,
    after?.createdAt ?? new Date(0),
    after?.operationId ?? "00000000-0000-0000-0000-000000000000",
    limit,
  );
  return rows.map((r) => ({ operationId: r.operation_id, shopId: r.shop_id, createdAt: r.created_at }));
}
