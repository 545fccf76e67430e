/**
 * The raw-SQL client shape (`$queryRawUnsafe` / `$executeRawUnsafe`, parameters `$1..$n`), which a
 * Prisma client has and the kit's database (`PgDb`) no longer does: every statement the kit runs
 * goes through Kysely. Only `changeWithEvent` (outbox.ts) still takes it, until it moves to Kysely
 * too; then this file goes.
 */
export interface SqlClient {
  /** Runs a statement and resolves to the number of affected rows. */
  $executeRawUnsafe(query: string, ...values: any[]): PromiseLike<number>;
  /** Runs a query and resolves to its rows (an array of objects keyed by column name). */
  $queryRawUnsafe<T = unknown>(query: string, ...values: any[]): PromiseLike<T>;
  /** As `PgTx.wakeOnCommit`, where the client has it. */
  wakeOnCommit?(channel: string, item?: unknown): boolean;
  /** As `PgDb.announceCommitted`, where the client has it. */
  announceCommitted?(channel: string, items: unknown[]): boolean;
}
