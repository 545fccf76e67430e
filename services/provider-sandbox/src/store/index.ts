/**
 * Persistence of the sandbox: every statement it runs, Kysely on its pg pool typed by the tables
 * generated from the Prisma schema (`generated/kysely`, the schema owning the migrations):
 * operations with their legs and evidence items, and the scenarios, cached in the process.
 */
import { createPgDb, type PgDb } from "@pgw/kit/db";
import type { Kysely } from "kysely";
import type { DB } from "../generated/kysely/database";
import { operationStore } from "./operations";
import { scenarioStore } from "./scenarios";

export type { DB };
/** The sandbox's database: Kysely on its pool. */
export type Db = PgDb<DB>;
/** Where a statement runs: the pool, or (a test) the pool with a plugin. */
export type Queries = Kysely<DB>;

/**
 * The sandbox provider's database client: the kit's pg pool. Commits are asynchronous: the sandbox
 * is a test double whose state a Postgres crash may roll back by a moment without harm, and
 * benchmarks then measure our durable commits, not a provider's.
 */
export function createDb(url: string): Db {
  return createPgDb<DB>(url, 10, { asyncCommit: true });
}

/** The sandbox's statements on `db`: operations (store/operations.ts) and scenarios (store/scenarios.ts). */
export function createStore(db: Queries) {
  return { ...operationStore(db), ...scenarioStore(db) };
}

/** The sandbox's store (see {@link createStore}). */
export type Store = ReturnType<typeof createStore>;

export * from "./operations";
export { SCENARIO_CHANNEL } from "./scenarios";
