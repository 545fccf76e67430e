/**
 * Persistence of the routing unit: every statement it runs, one file per table group. Statements are
 * Kysely on the unit's pg pool, typed by the tables generated from the Prisma schema
 * (`generated/kysely`); the Prisma client is left only the admin listing of routes. Rows stay here
 * and in handlers' mappers; RPCs never return them.
 */
import { createPrismaClient, type PgDb, type PgTx, type SealedColumn } from "@pgw/kit/db";
import type { Kysely } from "kysely";
import type pg from "pg";
import type { DB } from "../generated/kysely/database";
import { PrismaClient } from "../generated/prisma/client";

export type { DB };
/** The ORM client: the admin listing of routes (and tests' setup). */
export type Db = PrismaClient;
/** The routing database on the kit's pg pool: every other statement. */
export type Sql = PgDb<DB>;
/** A transaction of `Sql.$transaction`. */
export type Tx = PgTx<DB>;
/** Where a statement runs: the pool or a transaction. */
export type Queries = Kysely<DB>;

/** The columns this unit seals (kit data-keys.ts), as SQL names; re-sealed by DATA_RESEAL=only. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: "providers", column: "callback_secret" },
  { table: "allocations", column: "requisites_number" },
  { table: "provider_callbacks", column: "body" },
];

/** The routing database's ORM client (Prisma on the unit's pg pool). */
export function createDb(pool: pg.Pool): Db {
  return createPrismaClient(PrismaClient, pool);
}

export * from "./allocations";
export * from "./fx-rates";
export * from "./provider-callbacks";
export * from "./providers";
export * from "./seed";
export * from "./unsettled-placements";
