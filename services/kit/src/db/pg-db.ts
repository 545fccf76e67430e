/**
 * The unit's database: one `pg` pool, with Kysely as the typed way to write SQL on it (its table
 * types generated from the unit's Prisma schema by prisma-kysely, camelCase as Prisma's fields) and
 * the pool Prisma Client runs on too. What the kit adds under Kysely, at its Dialect and Driver
 * extension points: each parameterised statement prepared once per connection, a bounded wait for
 * a connection, connections that failed destroyed rather than reused, and transactions with a
 * timeout and commit hooks (`$transaction`).
 *
 * Rows come back as Prisma gives them, so code moves between the two unchanged: NUMERIC as a
 * decimal.js value (never a float), BIGINT as a bigint, timestamps as Date, BYTEA as a Buffer.
 */
import {
  CamelCasePlugin,
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type ColumnType,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from "kysely";
import pg from "pg";
import { Money } from "@pgw/contracts";

/** A NUMERIC column as the pool reads it (decimal.js) and as it is written: a decimal string at the column's scale. */
export type NumericColumn = ColumnType<Money, string, string>;

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

/** How long a statement outside a transaction, or a transaction without `maxWait`, waits for a connection. */
const DEFAULT_WAIT_MS = 3000;
/** The pool's own bound on any wait (its connectionTimeoutMillis); callers' maxWait is capped to it. */
const MAX_WAIT_MS = 30_000;

/**
 * A connection from the pool within `waitMs`, else a rejection. pg-pool takes only one timeout for
 * the whole pool, so the caller's wait is a timer of its own; a connection that arrives after the
 * caller gave up goes straight back to the pool.
 */
function acquire(pool: pg.Pool, waitMs: number): Promise<pg.PoolClient> {
  const pending = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      pending.then((client) => client.release(), () => undefined);
      reject(new Error(`no database connection within ${waitMs} ms`));
    }, waitMs);
  });
  return Promise.race([pending, gaveUp]).finally(() => clearTimeout(timer));
}

type Runner = (config: pg.QueryConfig) => Promise<pg.QueryResult>;

/** Why a borrowed connection must not go back to the pool, once something says so. */
interface Lease {
  broken?: Error;
}

/**
 * Runs `use` on a connection from the pool (waiting at most `waitMs`) and gives it back, or destroys
 * it when the lease says it is broken. pg-pool watches only idle clients for errors, so a lost
 * connection while checked out would be an unhandled 'error' event: the lease records it instead.
 */
async function withConnection<R>(pool: pg.Pool, waitMs: number, use: (client: pg.PoolClient, lease: Lease) => Promise<R>): Promise<R> {
  const client = await acquire(pool, waitMs);
  const lease: Lease = {};
  const lost = (err: Error) => void (lease.broken ??= err);
  client.on("error", lost);
  try {
    return await use(client, lease);
  } finally {
    client.removeListener("error", lost);
    client.release(lease.broken);
  }
}

/** One statement on a pooled connection, as pool.query runs it but with this module's wait. */
function onPool(pool: pg.Pool): Runner {
  return (config) =>
    withConnection(pool, DEFAULT_WAIT_MS, async (client, lease) => {
      try {
        return await client.query(config);
      } catch (err) {
        // Postgres refusing a statement leaves the connection usable (pool.query would drop it, and a
        // unique violation is routine here); any other failure means the connection is gone.
        if (!(err instanceof pg.DatabaseError)) lease.broken ??= err as Error;
        throw err;
      }
    });
}

/** Kysely's connection over one of ours: every statement through `run`. */
class RunnerConnection implements DatabaseConnection {
  constructor(private readonly run: Runner) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.run(statementOf(query.sql, query.parameters as unknown[]));
    const changed = result.command === "INSERT" || result.command === "UPDATE" || result.command === "DELETE" || result.command === "MERGE";
    return { rows: result.rows as R[], numAffectedRows: changed && result.rowCount !== null ? BigInt(result.rowCount) : undefined };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming queries are not supported on this database client");
  }
}

/**
 * Kysely's driver over `run`. A transaction is opened with `$transaction` (its wait, timeout and
 * commit hooks), never with Kysely's own `transaction()`, which this driver refuses.
 */
function runnerDriver(run: Runner, destroy: () => Promise<void>): Driver {
  const connection = new RunnerConnection(run);
  const refuse = async () => {
    throw new Error("open transactions with $transaction (kit/src/db/pg-db.ts), not Kysely's transaction()");
  };
  return {
    init: async () => undefined,
    acquireConnection: async () => connection,
    beginTransaction: refuse,
    commitTransaction: refuse,
    rollbackTransaction: refuse,
    releaseConnection: async () => undefined,
    destroy,
  };
}

/** A Kysely on `run`: Postgres SQL, camelCase names in code for the snake_case ones in the database. */
function kyselyOn<DB>(run: Runner, destroy: () => Promise<void> = async () => undefined): Kysely<DB> {
  const dialect: Dialect = {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => runnerDriver(run, destroy),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (db) => new PostgresIntrospector(db),
  };
  return new Kysely<DB>({ dialect, plugins: [CAMEL_CASE] });
}

const CAMEL_CASE = new CamelCasePlugin();

/** Commit hooks of a kit transaction. */
export interface CommitHooks {
  /**
   * When this process listens to `channel` through the transaction's pool (`PgDb.onCommit`),
   * arranges for that listener to be called once the transaction commits (never when it rolls
   * back), with the `item`s of every such call, and answers true, so the caller sends no NOTIFY;
   * otherwise false.
   */
  wakeOnCommit(channel: string, item?: unknown): boolean;
}

/** A transaction of `$transaction`: Kysely on its one connection, and its commit hooks. */
export type PgTx<DB = any> = Kysely<DB> & CommitHooks;

/** Options of `$transaction`, as Prisma's interactive transactions take them (times in milliseconds). */
export interface TransactionOptions {
  /** How long to wait for a connection from the pool (default 3 s, at most 30 s). */
  maxWait?: number;
  /** How long the transaction may run before it is rolled back (default 5000). */
  timeout?: number;
  /** `"ReadUncommitted"`, `"ReadCommitted"`, `"RepeatableRead"` or `"Serializable"` (Prisma's `TransactionIsolationLevel` values); default the server's. */
  isolationLevel?: any;
}

/** The unit's database: Kysely on its one pg pool, with transactions and commit hooks. */
export interface PgDb<DB = any> extends Kysely<DB> {
  /**
   * Runs `fn` in one transaction on one connection: BEGIN (with the isolation level asked for),
   * COMMIT when `fn` resolves, ROLLBACK when it rejects. It waits up to `maxWait` for a connection
   * (default 3 s, at most 30 s); past `timeout` (default 5000 ms) the connection is destroyed, which
   * rolls the transaction back and fails whatever `fn` still sends.
   */
  $transaction<R>(fn: (tx: PgTx<DB>) => Promise<R>, options?: TransactionOptions): Promise<R>;
  /** Closes the pool (the unit's shutdown). */
  end(): Promise<void>;
  /**
   * From now on, `listener` is called right after each COMMIT of a transaction that asked to wake
   * `channel` (`tx.wakeOnCommit`), with the items it gave, in order: the in-process stand-in for
   * LISTEN on that channel, for work this process commits itself. Such a transaction sends no
   * NOTIFY, which takes a lock that serialises every notifying commit of the whole Postgres server
   * until its WAL is flushed.
   */
  onCommit<T = unknown>(channel: string, listener: (items: T[]) => void): void;
  /**
   * For a statement that committed on its own (outside any transaction): calls this process's
   * listener of `channel` (`onCommit`) with `items` now and answers true; answers false when none
   * listens, so the caller sends a NOTIFY itself.
   */
  announceCommitted(channel: string, items: unknown[]): boolean;
  /** The pool itself, for Prisma's pg adapter (one pool per unit). */
  readonly pool: pg.Pool;
}

/** Options of {@link pgDbOn} and {@link createPgDb}. */
export interface PgDbOptions {
  /**
   * Called for every statement this database sends, just before it goes out: its SQL text (Kysely's,
   * parameters as `$1..$n`), and whether it runs inside a `$transaction` (whose BEGIN, COMMIT and
   * ROLLBACK are reported too, with `true`). An observation point for tests (which statements a job
   * runs, how many transactions) and for metrics. It runs on the statement's path, so it must be
   * cheap; what it throws is ignored. Prisma Client's statements on the same pool are not reported.
   */
  onStatement?(sql: string, inTransaction: boolean): void;
}

/**
 * The unit's pooled database. A statement outside a transaction waits up to 3 s for a connection.
 */
export function createPgDb<DB = any>(url: string, max = 10, options: PgDbOptions & { asyncCommit?: boolean } = {}): PgDb<DB> {
  // asyncCommit: COMMIT returns before the WAL reaches disk (synchronous_commit off: still atomic
  // and consistent, but a Postgres crash may lose the last few hundred ms of commits). Only for
  // data whose loss is harmless, such as a test double's; on this VM each durable commit costs the
  // backend about 100 µs more CPU and the caller a slower wake-up.
  const settings = options.asyncCommit ? "-c synchronous_commit=off" : undefined;
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: MAX_WAIT_MS, idleTimeoutMillis: 30000, types, options: settings });
  pool.on("error", () => undefined); // an idle connection dropped by the server: the next query reconnects
  return pgDbOn<DB>(pool, options);
}

/** The same client over an existing pool (whose own type parsers then apply). */
export function pgDbOn<DB = any>(pool: pg.Pool, options: PgDbOptions = {}): PgDb<DB> {
  const onStatement = options.onStatement;
  /** Reports `text` to onStatement, if any. */
  const observe = onStatement
    ? (text: string, inTransaction: boolean) => {
        try {
          onStatement(text, inTransaction);
        } catch {
          /* an observer never fails the statement */
        }
      }
    : undefined;
  /** `run`, reporting each statement first. */
  const observed = (run: Runner, inTransaction: boolean): Runner => (observe ? (config) => (observe(config.text, inTransaction), run(config)) : run);
  const commitListeners = new Map<string, (items: unknown[]) => void>();
  /** Calls `channel`'s listener with `items`, if one listens: the work committed, whatever the listener does. */
  const announceCommitted = (channel: string, items: unknown[]): boolean => {
    const listener = commitListeners.get(channel);
    if (!listener) return false;
    try {
      listener(items);
    } catch {
      /* committed all the same; the listener's own poll takes over */
    }
    return true;
  };
  const run = observed(onPool(pool), false);
  const extras: Omit<PgDb<DB>, keyof Kysely<DB>> = {
    pool,
    $transaction<R>(fn: (tx: PgTx<DB>) => Promise<R>, options: TransactionOptions = {}): Promise<R> {
      const waitMs = Math.min(options.maxWait ?? DEFAULT_WAIT_MS, MAX_WAIT_MS);
      return withConnection(pool, waitMs, async (client, lease) => {
        const timeoutMs = options.timeout ?? 5000;
        let timer: NodeJS.Timeout | undefined;
        const expired = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            lease.broken = new Error(`transaction exceeded ${timeoutMs} ms; rolled back`);
            reject(lease.broken);
          }, timeoutMs);
        });
        // Observed by the races below; this keeps a timeout that fires before they are set up (a
        // BEGIN stuck on a stalled server) from being an unhandled rejection, which ends the process.
        expired.catch(() => undefined);
        try {
          const level = options.isolationLevel ? ISOLATION[String(options.isolationLevel)] : undefined;
          const begin = level ? `BEGIN ISOLATION LEVEL ${level}` : "BEGIN";
          observe?.(begin, true);
          await Promise.race([client.query(begin), expired]);
          const onClient = observed((config) => client.query(config), true);
          const woken = new Map<string, unknown[]>();
          const hooks: CommitHooks = {
            wakeOnCommit: (channel, item) => {
              if (!commitListeners.has(channel)) return false;
              const items = woken.get(channel) ?? [];
              if (item !== undefined) items.push(item);
              woken.set(channel, items);
              return true;
            },
          };
          const tx = Object.assign(kyselyOn<DB>(onClient), hooks);
          const result = await Promise.race([fn(tx), expired]);
          observe?.("COMMIT", true);
          await client.query("COMMIT");
          for (const [channel, items] of woken) announceCommitted(channel, items);
          return result;
        } catch (err) {
          if (!lease.broken) {
            observe?.("ROLLBACK", true);
            await client.query("ROLLBACK").catch(() => undefined);
          }
          throw err;
        } finally {
          clearTimeout(timer);
        }
      });
    },
    end: () => pool.end(),
    announceCommitted,
    onCommit(channel, listener) {
      commitListeners.set(channel, listener as (items: unknown[]) => void);
    },
  };
  return Object.assign(kyselyOn<DB>(run, () => pool.end()), extras) as PgDb<DB>;
}
