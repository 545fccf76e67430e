import type pg from "pg";
import { changeWithEvent, createPrismaClient, Money, preferPlainIndexScan, type DbClient, type OutboxEvent, type SealedColumn, type SqlClient } from "@pgw/kit";
import { createHash, randomUUID } from "node:crypto";
import type { CreateCommand } from "../domain/create-rules";
import { PrismaClient, type Operation, type Shop } from "../generated/prisma/client";

/** The ORM client: accounts and admin listings (cold paths). */
export type Db = PrismaClient;
/** The operations database on the kit's pg pool: every operation read and write (hot paths). */
export type Sql = DbClient;
/** A transaction of {@link Sql}. */
export type Tx = SqlClient;
/** An operation as stored: `number`, `destNumber` and `requestHash` sealed (kit data-keys.ts). */
export type OperationRow = Omit<Operation, "merchantOperationKey">;
export type { ApiKey as ApiKeyRow, Merchant as MerchantRow, Operator as OperatorRow, Shop as ShopRow } from "../generated/prisma/client";

/** The operations database client (Prisma on the pg adapter). */
export function createDb(pool: pg.Pool): Db {
  return createPrismaClient(PrismaClient, pool);
}

/** The columns this unit seals (a card or phone number, and the request hash made from one); re-sealed by DATA_RESEAL=only. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: "operations", column: "dest_number" },
  { table: "operations", column: "number" },
  { table: "operations", column: "request_hash" },
];

/** How an operation is looked up within a shop. */
export type OperationKey = { operationId: string } | { merchantOperationId: string };

// Hot paths read and write operations with SQL (one statement each) rather than the ORM, whose
// query compiler costs more CPU than the query itself; the aliases give back the model's shape.
const OPERATION_COLUMNS = `id::text, shop_id::text AS "shopId", merchant_id::text AS "merchantId",
  merchant_operation_id AS "merchantOperationId", request_hash AS "requestHash", type, status, method, currency,
  expected_amount AS "expectedAmount", actual_amount AS "actualAmount", client_id AS "clientId", client_ip AS "clientIp",
  dest_number AS "destNumber", dest_name AS "destName", dest_bankname AS "destBankname", number, holder_name AS "holderName",
  bankname, requires_receipt AS "requiresReceipt", fx_source AS "fxSource", fx_rate AS "fxRate",
  settlement_currency AS "settlementCurrency", settlement_amount AS "settlementAmount", commission_amount AS "commissionAmount",
  recorded_currency AS "recordedCurrency", recorded_amount AS "recordedAmount", expires_at AS "expiresAt",
  manual_check_reason AS "manualCheckReason", provider_reported_amount AS "providerReportedAmount", allocation_id AS "allocationId", created_at AS "createdAt", updated_at AS "updatedAt"`;

async function oneOperation(db: SqlClient, query: string, ...values: unknown[]): Promise<OperationRow | null> {
  const rows = await db.$queryRawUnsafe<OperationRow[]>(query, ...values);
  return rows[0] ?? null;
}

/**
 * What identifies a merchant_operation_id within its shop: its sha256. The key may be any non-empty
 * string (docs/api.md, Idempotency), longer than a btree index entry can hold.
 */
export const operationKeyHash = (merchantOperationId: string): Buffer => createHash("sha256").update(merchantOperationId, "utf8").digest();

const keyFilter = (key: OperationKey): [string, string | Buffer] =>
  "operationId" in key ? ["id = $2::uuid", key.operationId] : ["merchant_operation_key = $2::bytea", operationKeyHash(key.merchantOperationId)];

/** The operation of a shop by either key (one indexed read). */
export function findOperation(db: SqlClient, shopId: string, key: OperationKey): Promise<OperationRow | null> {
  const [filter, value] = keyFilter(key);
  return oneOperation(db, `SELECT ${OPERATION_COLUMNS} FROM operations WHERE shop_id = $1::uuid AND ${filter}`, shopId, value);
}

/** An operation of any shop by its id. */
export function findOperationById(db: SqlClient, id: string): Promise<OperationRow | null> {
  return oneOperation(db, `SELECT ${OPERATION_COLUMNS} FROM operations WHERE id = $1::uuid`, id);
}

/** Locks the operation row for the rest of the transaction (FOR UPDATE) and reads it; any shop when `shopId` is null. */
export function lockOperation(tx: SqlClient, shopId: string | null, key: OperationKey): Promise<OperationRow | null> {
  const [filter, value] = keyFilter(key);
  return oneOperation(tx, `SELECT ${OPERATION_COLUMNS} FROM operations WHERE ($1::uuid IS NULL OR shop_id = $1::uuid) AND ${filter} FOR UPDATE`, shopId, value);
}

// The shop row's columns (table alias `s`) under the model's names, each after `prefix`.
const SHOP_FIELDS = [
  ["id::text", "id"],
  ["merchant_id::text", "merchantId"],
  ["name", "name"],
  ["webhook_url", "webhookUrl"],
  ["checkout_enabled", "checkoutEnabled"],
  ["settlement_currency", "settlementCurrency"],
  ["overdraft_limit", "overdraftLimit"],
  ["rate_limit_rps", "rateLimitRps"],
  ["created_at", "createdAt"],
  ["updated_at", "updatedAt"],
] as const;
const shopColumns = (prefix: string) => SHOP_FIELDS.map(([column, name]) => `s.${column} AS "${prefix}${name}"`).join(", ");

/** The shop settings a create needs. */
export async function findShop(db: SqlClient, shopId: string): Promise<Shop | null> {
  const rows = await db.$queryRawUnsafe<Shop[]>(`SELECT ${shopColumns("")} FROM shops s WHERE s.id = $1::uuid`, shopId);
  return rows[0] ?? null;
}

const CREATING_INSERT = `INSERT INTO operations (id, shop_id, merchant_id, merchant_operation_id, request_hash, type, status, method, currency,
    expected_amount, client_id, client_ip, dest_number, dest_name, dest_bankname, settlement_currency, merchant_operation_key)`;

/** What a create stores sealed: the request's hash and the payout's destination number. */
export interface SealedCreate {
  requestHash: string;
  destNumber: string | null;
}

/** The values of a `creating` row after $1 (its id) and $2 (the shop's id); `shop` supplies merchant_id and settlement_currency. */
const creatingValues = (cmd: CreateCommand, sealed: SealedCreate) => [
  cmd.merchantOperationId,
  sealed.requestHash,
  cmd.type,
  cmd.method,
  cmd.currency,
  cmd.amount,
  cmd.clientId,
  cmd.clientIp ?? null,
  sealed.destNumber,
  cmd.destination?.name ?? null,
  cmd.destination?.bankname ?? null,
  operationKeyHash(cmd.merchantOperationId),
];
const CREATING_PLACEHOLDERS = `$3, $4, $5, 'creating', $6, $7, $8::numeric, $9, $10, $11, $12, $13`;

/**
 * A create's first claim: reads the shop and, if it exists, claims (shop, merchant_operation_id)
 * with a row in the internal `creating` state, in one statement. `claimed` is null when another
 * create holds the key (the unique constraint decides, no read-modify-write); both are null when
 * the shop does not exist.
 */
export async function claimInShop(db: SqlClient, shopId: string, cmd: CreateCommand, sealed: SealedCreate): Promise<{ shop: Shop | null; claimed: OperationRow | null }> {
  const [row] = await db.$queryRawUnsafe<Record<string, unknown>[]>(
    `WITH s AS (SELECT * FROM shops WHERE id = $2::uuid),
     claimed AS (
       ${CREATING_INSERT}
       SELECT $1::uuid, s.id, s.merchant_id, ${CREATING_PLACEHOLDERS}, s.settlement_currency, $14::bytea FROM s
       ON CONFLICT (shop_id, merchant_operation_key) DO NOTHING
       RETURNING ${OPERATION_COLUMNS})
     SELECT ${shopColumns("shop.")}, claimed.* FROM s LEFT JOIN claimed ON true`,
    randomUUID(),
    shopId,
    ...creatingValues(cmd, sealed),
  );
  if (!row) return { shop: null, claimed: null };
  const shop: Record<string, unknown> = {};
  const claimed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith("shop.")) shop[key.slice("shop.".length)] = value;
    else claimed[key] = value;
  }
  return { shop: shop as Shop, claimed: claimed.id === null ? null : (claimed as OperationRow) };
}

/**
 * Claims (shop, merchant_operation_id) with a row in the internal `creating` state; answers null
 * when another create holds the key (the unique constraint decides, no read-modify-write).
 */
export function insertCreating(db: SqlClient, cmd: CreateCommand, shop: { id: string; merchantId: string; settlementCurrency: string }, sealed: SealedCreate): Promise<OperationRow | null> {
  return oneOperation(
    db,
    `${CREATING_INSERT}
     VALUES ($1::uuid, $2::uuid, $15::uuid, ${CREATING_PLACEHOLDERS}, $16, $14::bytea)
     ON CONFLICT (shop_id, merchant_operation_key) DO NOTHING
     RETURNING ${OPERATION_COLUMNS}`,
    randomUUID(),
    shop.id,
    ...creatingValues(cmd, sealed),
    shop.merchantId,
    shop.settlementCurrency,
  );
}

// Columns a transition may change, with their SQL types (parameters are cast explicitly).
const UPDATABLE = {
  status: ["status", "text"],
  actualAmount: ["actual_amount", "numeric"],
  number: ["number", "text"],
  holderName: ["holder_name", "text"],
  bankname: ["bankname", "text"],
  requiresReceipt: ["requires_receipt", "boolean"],
  fxSource: ["fx_source", "text"],
  fxRate: ["fx_rate", "numeric"],
  settlementCurrency: ["settlement_currency", "text"],
  settlementAmount: ["settlement_amount", "numeric"],
  commissionAmount: ["commission_amount", "numeric"],
  recordedCurrency: ["recorded_currency", "text"],
  recordedAmount: ["recorded_amount", "numeric"],
  expiresAt: ["expires_at", "timestamptz"],
  manualCheckReason: ["manual_check_reason", "text"],
  providerReportedAmount: ["provider_reported_amount", "numeric"],
  allocationId: ["allocation_id", "text"],
} as const;

export type OperationChange = { [K in keyof typeof UPDATABLE]?: string | boolean | Date | null };

/**
 * The UPDATE writing a change where `condition` holds and returning the row as stored; updated_at
 * moves to `updatedAt`, or to the database's clock.
 */
function operationUpdate(id: string, change: OperationChange, condition: { status?: string }, updatedAt?: Date): { text: string; values: unknown[] } {
  const sets: string[] = [];
  const values: unknown[] = [id];
  for (const [field, value] of Object.entries(change)) {
    if (value === undefined) continue;
    const [column, type] = UPDATABLE[field as keyof typeof UPDATABLE];
    values.push(value instanceof Date ? value.toISOString() : value);
    sets.push(`${column} = $${values.length}::${type}`);
  }
  if (updatedAt) {
    values.push(updatedAt.toISOString());
    sets.push(`updated_at = $${values.length}::timestamptz`);
  } else sets.push("updated_at = clock_timestamp()");
  let where = "id = $1::uuid";
  if (condition.status !== undefined) {
    values.push(condition.status);
    where += ` AND status = $${values.length}::text`;
  }
  return { text: `UPDATE operations SET ${sets.join(", ")} WHERE ${where} RETURNING ${OPERATION_COLUMNS}`, values };
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
    const type = UPDATABLE[field as keyof typeof UPDATABLE][1];
    changed[field] = value === null ? null : type === "numeric" ? new Money(value as string) : type === "timestamptz" ? new Date(value as Date) : value;
  }
  return changed as OperationRow;
}

/**
 * Writes a change only while the operation is still in `status` (compare and set: no lock, no read
 * first), in one statement with the event that `event` makes of the row as it will be stored (see
 * {@link changedOperation}); answers the row as stored, or null (and no event) when it has moved on.
 */
export async function updateOperationFromWithEvent(db: SqlClient, row: OperationRow, status: string, change: OperationChange, event: (changed: OperationRow) => OutboxEvent): Promise<OperationRow | null> {
  // Never before created_at, whatever the application's clock says against the database's.
  const updatedAt = new Date(Math.max(Date.now(), row.updatedAt.getTime()));
  const rows = await changeWithEvent<OperationRow>(db, operationUpdate(row.id, change, { status }, updatedAt), event(changedOperation(row, change, updatedAt)));
  return rows[0] ?? null;
}

/** Writes a change to an operation locked in `tx` and answers the row as stored. */
export async function updateOperation(tx: SqlClient, id: string, change: OperationChange): Promise<OperationRow> {
  const { text, values } = operationUpdate(id, change, {});
  const row = await oneOperation(tx, text, ...values);
  if (!row) throw new Error(`operation ${id} vanished inside its own transaction`);
  return row;
}

/** Gives the key back after a create that nothing accepted (only while still `creating`). */
export async function releaseCreating(db: SqlClient, id: string): Promise<boolean> {
  return (await db.$executeRawUnsafe(`DELETE FROM operations WHERE id = $1::uuid AND status = 'creating'`, id)) === 1;
}

/** Ids of creates still `creating` since before `before` (their process died mid-flight). */
export async function abandonedCreates(db: DbClient, before: Date): Promise<string[]> {
  const rows = await db.$transaction(async (tx) => {
    await preferPlainIndexScan(tx); // every create leaves `creating`: the status index is full of stale entries
    return tx.$queryRawUnsafe<{ id: string }[]>(`SELECT id::text FROM operations WHERE status = 'creating' AND created_at < $1::timestamptz`, before.toISOString());
  });
  return rows.map((r) => r.id);
}

/** The outcome of the first cancel command of an operation, if any. */
export async function firstCancellation(tx: SqlClient, operationId: string): Promise<{ outcome: string } | null> {
  const rows = await tx.$queryRawUnsafe<{ outcome: string }[]>(
    `SELECT outcome FROM cancellations WHERE operation_id = $1::uuid ORDER BY created_at LIMIT 1`,
    operationId,
  );
  return rows[0] ?? null;
}

/** Records a cancel command (the audit log of cancellations). */
export async function insertCancellation(tx: SqlClient, c: { operationId: string; reason: string; outcome: string }): Promise<void> {
  await tx.$executeRawUnsafe(
    `INSERT INTO cancellations (id, operation_id, reason, outcome) VALUES ($1::uuid, $2::uuid, $3, $4)`,
    randomUUID(),
    c.operationId,
    c.reason,
    c.outcome,
  );
}

/** Records who decided a review or manual-check outcome, and why. */
export async function insertAudit(tx: SqlClient, operationId: string, a: { action: string; actor: string; reason: string; detail: string }): Promise<void> {
  await tx.$executeRawUnsafe(
    `INSERT INTO operation_audit (id, operation_id, action, actor, reason, detail) VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6)`,
    randomUUID(),
    operationId,
    a.action,
    a.actor,
    a.reason,
    a.detail,
  );
}

/**
 * Records money a provider reported for an operation that had already ended without it; a repeated
 * report for the same operation adds nothing (unique operation_id). Answers whether it was new.
 */
export async function insertLateFunds(tx: SqlClient, row: OperationRow, amount: string): Promise<boolean> {
  const inserted = await tx.$executeRawUnsafe(
    `INSERT INTO late_funds (id, operation_id, shop_id, operation_type, operation_status, amount, currency)
     VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6::numeric, $7)
     ON CONFLICT (operation_id) DO NOTHING`,
    randomUUID(),
    row.id,
    row.shopId,
    row.type,
    row.status,
    amount,
    row.currency,
  );
  return inserted > 0;
}
