import { createPrismaClient, type PgDb, type PgTx, type SealedColumn } from "@pgw/kit/db";
import type pg from "pg";
import type { DB } from "../generated/kysely/database";
import { PrismaClient } from "../generated/prisma/client";

/** Prisma Client on the unit's pool: configuration CRUD that writes no event (merchants, shop reads, API keys, operators). */
export type Db = PrismaClient;
/** The operations database, Kysely on the unit's pg pool: operations and everything that writes an event. */
export type Sql = PgDb<DB>;
/** A kit transaction of {@link Sql} (`sql.$transaction`). */
export type Tx = PgTx<DB>;

/** The operations database's Prisma client, on the unit's pool. */
export function createDb(pool: pg.Pool): Db {
  return createPrismaClient(PrismaClient, pool);
}

/** The columns this unit seals (a card or phone number, and the request hash made from one); re-sealed by DATA_RESEAL=only. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: "operations", column: "dest_number" },
  { table: "operations", column: "number" },
  { table: "operations", column: "request_hash" },
];
