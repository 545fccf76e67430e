/**
 * The notifier's database as the store sees it: the unit's one pg pool (kit `PgDb`, a Kysely typed
 * by the tables generated from prisma/schema.prisma) and its transactions, plus the few pieces of
 * SQL every store file shares.
 */
import type { PgDb, PgTx } from "@pgw/kit/db";
import { sql, type Kysely } from "kysely";
import type { DB } from "../generated/kysely/database";

/** The unit's pool: statements on their own, and `$transaction`. */
export type NotifierDb = PgDb<DB>;
/** A transaction of the unit's pool (kit `$transaction`), with its commit hooks. */
export type NotifierTx = PgTx<DB>;
/** Either of them: a function that runs its statements outside any transaction of its own takes this. */
export type NotifierSql = Kysely<DB>;

/** The commit channel "a delivery became due" (kit `PgDb.onCommit`): heard by this process's worker. */
export const DUE_CHANNEL = "pgw_notifier_due";

/**
 * Wakes this process's delivery worker once `tx` commits (see main.ts). Other replicas' workers
 * find the rows at their next poll: a NOTIFY would wake them at once, but it takes a lock that
 * serialises every notifying commit of the whole Postgres server until its WAL is flushed.
 */
export const wakeWorkerOnCommit = (tx: NotifierTx) => void tx.wakeOnCommit(DUE_CHANNEL);

/** The database's `now()` (the transaction's time), which every due time and lease is measured in. */
export const now = () => sql<Date>`now()`;

/** `now()` moved by `ms` milliseconds (a parameter); NULL when `ms` is null. */
export const nowPlusMs = (ms: number | null) => sql<Date>`now() + ${ms}::float8 * interval '1 millisecond'`;

/** `now()` moved back by `ms` milliseconds (a parameter). */
export const nowMinusMs = (ms: number) => sql<Date>`now() - ${ms}::float8 * interval '1 millisecond'`;

export type DeliveryStatus = "pending" | "delivered" | "failed" | "disabled";

/**
 * A delivery status written into the statement as a literal, as the hand-written SQL had it: the
 * statuses are the code's constants, never values, and with the literal every plan (generic ones
 * included) knows it asks for pending rows, the few among the delivered ones the queue's index
 * (status, next_attempt_at) leads with.
 */
export const statusLit = (status: DeliveryStatus) => sql.lit(status);

/**
 * Takes a transaction-scoped advisory lock on `key` (hashed by Postgres, as every replica computes
 * it): `exclusive` waits for every holder, `shared` only for an exclusive one.
 */
export async function advisoryLock(tx: NotifierTx, key: string, mode: "shared" | "exclusive"): Promise<void> {
  await tx
    .selectNoFrom((eb) => eb.fn(mode === "shared" ? "pg_advisory_xact_lock_shared" : "pg_advisory_xact_lock", [eb.fn("hashtextextended", [eb.val(key), eb.lit(0)])]).as("locked"))
    .execute();
}
