import { createPrismaClient, Money, type Currency, type SqlClient } from "@pgw/kit";
import type Decimal from "decimal.js";
import type { AccountReading } from "./domain/balances";
import type { OperationKind, Tariff } from "./domain/tariff";
import { PrismaClient } from "./generated/prisma/client";

export type Db = PrismaClient;

/** The ledger database client (Prisma on the pg adapter). */
export function createDb(url: string): Db {
  return createPrismaClient(PrismaClient, url);
}

/**
 * Runs `fn` in one READ COMMITTED transaction. Writers queue on the row locks of a shop's
 * accounts, so the pool wait and the transaction timeout are generous.
 */
export function inTransaction<R>(db: Db, fn: (tx: SqlClient) => Promise<R>): Promise<R> {
  return db.$transaction((tx) => fn(tx), { maxWait: 10_000, timeout: 15_000 });
}

/**
 * The shop's available and reserved accounts with the sum of their postings, in one statement:
 * one snapshot (a statement sees one snapshot even under READ COMMITTED, as a REPEATABLE READ
 * transaction would) and one round trip. The sums are index-only scans of
 * postings(account_id, amount).
 */
export async function readShopAccounts(db: SqlClient, shopId: string): Promise<AccountReading[]> {
  const rows = await db.$queryRawUnsafe<{ kind: "available" | "reserved"; currency: string; balance: string; journal: string }[]>(
    `SELECT a."kind", a."currency", a."balance"::text AS balance,
            COALESCE((SELECT sum(p."amount") FROM "postings" p WHERE p."account_id" = a."id"), 0)::text AS journal
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

/** An account whose materialised balance differs from the sum of its postings. */
export interface AccountMismatch {
  accountId: string;
  shopId: string;
  kind: string;
  currency: string;
  balance: string;
  journal: string;
}

/** A journal entry whose postings do not sum to zero in some currency. */
export interface UnbalancedEntry {
  entryId: string;
  currency: string;
  sum: string;
}

/** Every account against its journal, and every entry's sums, each read in one statement. */
export async function reconcileAccounts(db: SqlClient): Promise<{ checked: number; mismatches: AccountMismatch[]; unbalanced: UnbalancedEntry[] }> {
  const [{ checked, mismatches }] = await db.$queryRawUnsafe<{ checked: number; mismatches: AccountMismatch[] | null }[]>(
    `WITH j AS (SELECT "account_id", sum("amount") AS total FROM "postings" GROUP BY "account_id"),
          c AS (SELECT a."id", a."shop_id", a."kind", a."currency", a."balance", COALESCE(j.total, 0) AS journal
                FROM "accounts" a LEFT JOIN j ON j."account_id" = a."id")
     SELECT count(*)::int AS checked,
            json_agg(json_build_object('accountId', c."id", 'shopId', c."shop_id", 'kind', c."kind", 'currency', c."currency",
                                       'balance', c."balance"::text, 'journal', c.journal::text))
              FILTER (WHERE c."balance" <> c.journal) AS mismatches
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
