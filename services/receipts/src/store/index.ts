/**
 * Persistence of receipts: every statement it runs, one file per table group, Kysely on the
 * unit's pg pool typed by the tables generated from the Prisma schema (`generated/kysely`).
 */
import { createPrismaClient, type PgDb } from "@pgw/kit";
import type { Kysely } from "kysely";
import type pg from "pg";
import type { DB } from "../generated/kysely/database";
import { PrismaClient } from "../generated/prisma/client";

export type { DB };
/**
 * Prisma Client on the unit's pool. Receipts owns no configuration, so none of its statements runs
 * through it; the unit still opens it as its `db` (RunningUnit.db), which system tests read rows with.
 */
export type Db = PrismaClient;
/** The receipts database on the kit's pg pool: every statement. */
export type Sql = PgDb<DB>;
/** Where a statement runs. */
export type Queries = Kysely<DB>;

/** The receipts Prisma client (see {@link Db}). */
export function createDb(pool: pg.Pool): Db {
  return createPrismaClient(PrismaClient, pool);
}

export * from "./confirmations";
export * from "./evidence";
export * from "./file-storage";
export * from "./postgres-file-storage";
export * from "./review-leases";
