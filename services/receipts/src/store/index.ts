/**
 * Persistence of receipts: every statement it runs, one file per table group, Kysely on the
 * unit's pg pool typed by the tables generated from the Prisma schema (`generated/kysely`).
 */
import type { PgDb } from "@pgw/kit/db";
import type { Kysely } from "kysely";
import type { DB } from "../generated/kysely/database";

export type { DB };
/** The unit's `db` as the kit runs it: receipts owns no configuration, so it opens no Prisma Client and `db` is its pool. */
export type Db = PgDb<DB>;
/** The receipts database on the kit's pg pool: every statement. */
export type Sql = PgDb<DB>;
/** Where a statement runs. */
export type Queries = Kysely<DB>;

export * from "./confirmations";
export * from "./evidence";
export * from "./file-storage";
export * from "./postgres-file-storage";
export * from "./review-leases";
