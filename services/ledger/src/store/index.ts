/**
 * The ledger's persistence: every SQL statement of the unit is in this folder, written with Kysely
 * on the kit's pg pool and typed by the tables generated from prisma/schema.prisma. The unit opens
 * no Prisma client.
 *
 * - accounts.ts: the shop's balances read, and Reconcile's checks
 * - journal.ts: `postEntry`, the only writer of postings and balances
 * - reserves.ts: payout reserves (their rows and the entries that move their money)
 * - tariffs.ts: commission tariffs, read each time or through the process's cache
 * - shared-reads.ts: concurrent reads of one key coalesced
 */
import type { PgDb, PgTx } from "@pgw/kit/db";
import type { DB } from "../generated/kysely/database";

/** The ledger's database: the kit's pg pool as a Kysely of the ledger's tables. */
export type Db = PgDb<DB>;

/** A transaction of {@link inTransaction}: Kysely on the transaction's one connection. */
export type Tx = PgTx<DB>;

/**
 * Runs `fn` in one READ COMMITTED transaction. Writers queue on the row locks of a shop's
 * accounts, so the pool wait and the transaction timeout are generous.
 */
export function inTransaction<R>(db: Db, fn: (tx: Tx) => Promise<R>): Promise<R> {
  return db.$transaction((tx) => fn(tx), { maxWait: 10_000, timeout: 15_000 });
}
