/**
 * A {@link DbClient} over a plain `pg` pool: the access path of every service's hot paths (their
 * single-statement SQL, the outbox relay, consumers). Prisma's per-statement overhead measured
 * here is about 0.55 ms of CPU against 0.11 ms for the same statement through pg, and a create or
 * a completion runs a dozen statements. Schemas and migrations stay Prisma's, and the ORM still
 * serves the cold paths (accounts, admin).
 *
 * Rows come back as Prisma's raw queries give them, so code moves between the two unchanged:
 * NUMERIC as a decimal.js value (never a float), BIGINT as a bigint, timestamps as Date, BYTEA as
 * a Buffer.
 */
import pg from "pg";
import { Money } from "./money";
import type { DbClient, SqlClient, TransactionOptions } from "./sql-client";

const NUMERIC_OID = 1700;
const INT8_OID = 20;

const ISOLATION: Record<string, string> = {
  ReadUncommitted: "READ UNCOMMITTED",
  ReadCommitted: "READ COMMITTED",
  RepeatableRead: "REPEATABLE READ",
  Serializable: "SERIALIZABLE",
};

const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === NUMERIC_OID) return (value: string) => new Money(value);
    if (oid === INT8_OID) return (value: string) => BigInt(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

// Parameterised statements are named, so each connection prepares one once and from then on only
// binds and executes it: Postgres skips parsing and planning (≈ 0.19 → 0.07 ms of its CPU for a
// one-row read here). Statements without parameters stay on the simple protocol, the only one that
// takes several statements in one string. Past PREPARED_LIMIT distinct texts (generated SQL) the rest
// run unnamed, so no connection's statement cache grows without bound.
const PREPARED_LIMIT = 2000;
const statementNames = new Map<string, string>();

function statementOf(text: string, values: unknown[]): pg.QueryConfig {
  if (values.length === 0) return { text };
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= PREPARED_LIMIT) return { text, values };
    name = `pgw_${statementNames.size}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

function sqlOn(q: pg.Pool | pg.PoolClient): SqlClient {
  return {
    $executeRawUnsafe: async (query: string, ...values: any[]) => (await q.query(statementOf(query, values))).rowCount ?? 0,
    $queryRawUnsafe: async <T>(query: string, ...values: any[]) => (await q.query(statementOf(query, values))).rows as T,
  };
}

export interface PgDb extends DbClient {
  /** Closes the pool (the unit's shutdown). */
  end(): Promise<void>;
}

/**
 * A pooled client. `$transaction` runs BEGIN (with the isolation level asked for) and COMMIT on
 * one connection, ROLLBACK when `fn` rejects; past `timeout` (default 5000 ms, as Prisma's) the
 * connection is destroyed, which rolls the transaction back and fails whatever `fn` still sends;
 * a connection lost meanwhile is destroyed too, never handed out again.
 */
export function createPgDb(url: string, max = 10): PgDb {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 3000, idleTimeoutMillis: 30000, types });
  pool.on("error", () => undefined); // an idle connection dropped by the server: the next query reconnects
  return pgDbOn(pool);
}

/** The same client over an existing pool (whose own type parsers then apply). */
export function pgDbOn(pool: pg.Pool): PgDb {
  return {
    ...sqlOn(pool),
    async $transaction<R>(fn: (tx: SqlClient) => Promise<R>, options: TransactionOptions = {}): Promise<R> {
      const client = await pool.connect();
      const timeoutMs = options.timeout ?? 5000;
      let timer: NodeJS.Timeout | undefined;
      let broken: Error | undefined;
      // pg-pool listens for errors only on idle clients: a connection lost between this
      // transaction's statements would otherwise be an unhandled 'error' event.
      const lost = (err: Error) => void (broken ??= err);
      client.on("error", lost);
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          broken = new Error(`transaction exceeded ${timeoutMs} ms; rolled back`);
          reject(broken);
        }, timeoutMs);
      });
      try {
        const level = options.isolationLevel ? ISOLATION[String(options.isolationLevel)] : undefined;
        await client.query(level ? `BEGIN ISOLATION LEVEL ${level}` : "BEGIN");
        const result = await Promise.race([fn(sqlOn(client)), expired]);
        await client.query("COMMIT");
        return result;
      } catch (err) {
        if (!broken) await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      } finally {
        clearTimeout(timer);
        client.removeListener("error", lost);
        client.release(broken);
      }
    },
    end: () => pool.end(),
  };
}
