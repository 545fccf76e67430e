/**
 * Structural database types that kit code uses instead of a service's generated Prisma client.
 *
 * Every service's `PrismaClient` (Prisma 7, `prisma-client` generator, `@prisma/adapter-pg`) and
 * the client Prisma hands to an interactive transaction callback fit these shapes, so kit helpers
 * (outbox, consumer) run inside the caller's own transaction. Members use method syntax on
 * purpose: method parameters are checked bivariantly, which lets Prisma's overloaded
 * `$transaction` and its `PrismaPromise` results fit.
 */

/** Raw SQL access: a PrismaClient or a Prisma transaction client. Parameters are `$1..$n`. */
export interface SqlClient {
  /** Runs a statement and resolves to the number of affected rows. */
  $executeRawUnsafe(query: string, ...values: any[]): PromiseLike<number>;
  /** Runs a query and resolves to its rows (an array of objects keyed by column name). */
  $queryRawUnsafe<T = unknown>(query: string, ...values: any[]): PromiseLike<T>;
  /**
   * Only on a kit pg transaction: when this process listens to `channel` through the transaction's
   * client (`PgDb.onCommit`), arranges for that listener to be called once the transaction commits
   * (never when it rolls back), with the `item`s of every such call, and answers true, so the
   * caller sends no NOTIFY; otherwise false.
   */
  wakeOnCommit?(channel: string, item?: unknown): boolean;
  /**
   * Only on a kit pg pool, never on a transaction: for a statement that committed on its own, calls
   * this process's listener of `channel` (`PgDb.onCommit`) with `items` now and answers true;
   * answers false when none listens.
   */
  announceCommitted?(channel: string, items: unknown[]): boolean;
}

/** Options of an interactive transaction, as Prisma takes them (times in milliseconds). */
export interface TransactionOptions {
  /** How long to wait for a connection from the pool. */
  maxWait?: number;
  /** How long the transaction may run before it is rolled back. Prisma's default is 5000. */
  timeout?: number;
  /** Prisma's `TransactionIsolationLevel` value, e.g. `"Serializable"`. */
  isolationLevel?: any;
}

/** A client that can open interactive transactions: a service's PrismaClient. */
export interface DbClient extends SqlClient {
  /**
   * Runs `fn` in one transaction: commits when it resolves, rolls back when it rejects.
   */
  $transaction<R>(fn: (tx: SqlClient) => Promise<R>, options?: TransactionOptions): Promise<R>;
}
