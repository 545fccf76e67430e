import { createPrismaClient, type SqlClient } from "@pgw/kit";
import { randomUUID } from "node:crypto";
import type { CreateCommand } from "./domain/create-rules";
import { PrismaClient, type Operation } from "./generated/prisma/client";

export type Db = PrismaClient;
export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];
export type OperationRow = Operation;
export type { ApiKey as ApiKeyRow, Merchant as MerchantRow, Shop as ShopRow } from "./generated/prisma/client";

/** The operations database client (Prisma on the pg adapter). */
export function createDb(url: string): Db {
  return createPrismaClient(PrismaClient, url);
}

/** How an operation is looked up within a shop. */
export type OperationKey = { operationId: string } | { merchantOperationId: string };

export function findOperation(db: Db | Tx, shopId: string, key: OperationKey): Promise<OperationRow | null> {
  return "operationId" in key
    ? db.operation.findFirst({ where: { id: key.operationId, shopId } })
    : db.operation.findUnique({ where: { shopId_merchantOperationId: { shopId, merchantOperationId: key.merchantOperationId } } });
}

/** Locks the operation row for the rest of the transaction (FOR UPDATE) and reads it. */
export async function lockOperation(tx: Tx, shopId: string | null, key: OperationKey): Promise<OperationRow | null> {
  const [column, value] = "operationId" in key ? ["id", key.operationId] : ["merchant_operation_id", key.merchantOperationId];
  const rows = await (tx as unknown as SqlClient).$queryRawUnsafe<{ id: string }[]>(
    `SELECT id FROM operations WHERE ${column} = $1${column === "id" ? "::uuid" : ""} AND ($2::uuid IS NULL OR shop_id = $2::uuid) FOR UPDATE`,
    value,
    shopId,
  );
  return rows.length ? tx.operation.findUnique({ where: { id: rows[0].id } }) : null;
}

/**
 * Claims (shop, merchant_operation_id) with a row in the internal `creating` state; answers null
 * when another create holds the key (the unique constraint decides, no read-modify-write).
 */
export async function insertCreating(db: Db, cmd: CreateCommand, shop: { id: string; merchantId: string; settlementCurrency: string }, hash: string): Promise<OperationRow | null> {
  const id = randomUUID();
  const inserted = await db.$executeRawUnsafe(
    `INSERT INTO operations (id, shop_id, merchant_id, merchant_operation_id, request_hash, type, status, method, currency, expected_amount, client_id, client_ip, dest_number, dest_name, dest_bankname, settlement_currency)
     VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6, 'creating', $7, $8, $9::numeric, $10, $11, $12, $13, $14, $15)
     ON CONFLICT (shop_id, merchant_operation_id) DO NOTHING`,
    id,
    shop.id,
    shop.merchantId,
    cmd.merchantOperationId,
    hash,
    cmd.type,
    cmd.method,
    cmd.currency,
    cmd.amount,
    cmd.clientId,
    cmd.clientIp ?? null,
    cmd.destination?.number ?? null,
    cmd.destination?.name ?? null,
    cmd.destination?.bankname ?? null,
    shop.settlementCurrency,
  );
  return inserted === 1 ? db.operation.findUnique({ where: { id } }) : null;
}

/** Gives the key back after a create that nothing accepted (only while still `creating`). */
export async function releaseCreating(db: Db, id: string): Promise<boolean> {
  return (await db.operation.deleteMany({ where: { id, status: "creating" } })).count === 1;
}
