/**
 * A {@link DbClient} over a real `pg.Pool`, standing in for a service's PrismaClient in kit tests:
 * `$1..$n` parameters are passed through, and each `$transaction` call runs in its own
 * BEGIN/COMMIT on one pooled connection, rolled back when the callback rejects or outlives
 * `timeout` (default 5000 ms, as Prisma's).
 */
import pg from "pg";
import type { DbClient, SqlClient, TransactionOptions } from "../../src/sql-client";

const ISOLATION: Record<string, string> = {
  ReadUncommitted: "READ UNCOMMITTED",
  ReadCommitted: "READ COMMITTED",
  RepeatableRead: "REPEATABLE READ",
  Serializable: "SERIALIZABLE",
};

/** SqlClient bound to one pg connection or pool. */
function sqlOn(q: pg.Pool | pg.PoolClient): SqlClient {
  return {
    async $executeRawUnsafe(query: string, ...values: any[]): Promise<number> {
      const res = await q.query(query, values);
      return res.rowCount ?? 0;
    },
    async $queryRawUnsafe<T = unknown>(query: string, ...values: any[]): Promise<T> {
      const res = await q.query(query, values);
      return res.rows as T;
    },
  };
}

/** DbClient over a pg pool (see the module comment). */
export class PgDbClient implements DbClient {
  private readonly direct: SqlClient;

  constructor(readonly pool: pg.Pool) {
    this.direct = sqlOn(pool);
  }

  $executeRawUnsafe(query: string, ...values: any[]): Promise<number> {
    return this.direct.$executeRawUnsafe(query, ...values) as Promise<number>;
  }

  $queryRawUnsafe<T = unknown>(query: string, ...values: any[]): Promise<T> {
    return this.direct.$queryRawUnsafe<T>(query, ...values) as Promise<T>;
  }

  async $transaction<R>(fn: (tx: SqlClient) => Promise<R>, options: TransactionOptions = {}): Promise<R> {
    const client = await this.pool.connect();
    const timeoutMs = options.timeout ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const level = options.isolationLevel ? ISOLATION[String(options.isolationLevel)] : undefined;
      await client.query(level ? `BEGIN ISOLATION LEVEL ${level}` : "BEGIN");
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`transaction timed out after ${timeoutMs} ms`)), timeoutMs);
      });
      const result = await Promise.race([fn(sqlOn(client)), expired]);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(timer);
      client.release();
    }
  }
}
