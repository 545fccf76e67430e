/**
 * A DbClient (the kit's structural database type) over a plain `pg` pool, for the notifier's hot
 * paths: consuming status events and running the delivery queue take several statements per
 * webhook at hundreds of webhooks a second, where Prisma's per-query overhead (about 0.5 ms of CPU
 * per statement, measured) would be the limit. The schema and migrations stay Prisma's; only the
 * access path differs.
 */
import type { DbClient, SqlClient, TransactionOptions } from "@pgw/kit";
import pg from "pg";

function sqlOn(q: pg.Pool | pg.PoolClient): SqlClient {
  return {
    $executeRawUnsafe: async (query: string, ...values: any[]) => (await q.query(query, values)).rowCount ?? 0,
    $queryRawUnsafe: async <T>(query: string, ...values: any[]) => (await q.query(query, values)).rows as T,
  };
}

export interface PgDb extends DbClient {
  end(): Promise<void>;
}

/**
 * A pooled client. `$transaction` runs BEGIN/COMMIT on one connection, ROLLBACK when `fn` rejects;
 * past `timeout` (default 5000 ms, as Prisma's) the connection is destroyed, which rolls the
 * transaction back and fails whatever `fn` still sends.
 */
export function createPgDb(url: string, max = 10): PgDb {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 3000, idleTimeoutMillis: 30000 });
  pool.on("error", () => undefined); // an idle connection dropped by the server: the next query reconnects
  const direct = sqlOn(pool);
  return {
    $executeRawUnsafe: (query, ...values) => direct.$executeRawUnsafe(query, ...values),
    $queryRawUnsafe: (query, ...values) => direct.$queryRawUnsafe(query, ...values),
    async $transaction<R>(fn: (tx: SqlClient) => Promise<R>, options: TransactionOptions = {}): Promise<R> {
      const client = await pool.connect();
      let timer: NodeJS.Timeout | undefined;
      let broken: Error | undefined;
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          broken = new Error(`transaction exceeded ${options.timeout ?? 5000} ms; rolled back`);
          reject(broken);
        }, options.timeout ?? 5000);
      });
      try {
        await client.query("BEGIN");
        const result = await Promise.race([fn(sqlOn(client)), expired]);
        await client.query("COMMIT");
        return result;
      } catch (err) {
        if (!broken) await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      } finally {
        clearTimeout(timer);
        client.release(broken);
      }
    },
    end: () => pool.end(),
  };
}
