/**
 * Database-level helpers: one Postgres server, one database per service.
 * No business rules; used by service start-up, the local launcher and tests.
 */
import { sql } from "kysely";
import pg from "pg";
import type { PgDb } from "./pg-db";
import { succeedsWithin } from "../runtime/within";

/** SQLSTATE codes tolerated when two processes create the same database at once. */
const DUPLICATE_DATABASE = "42P04";
const UNIQUE_VIOLATION = "23505";
/** SQLSTATE of a connection to a database that does not exist. */
const INVALID_CATALOG_NAME = "3D000";
/** SQLSTATE raised when a database still has sessions at DROP time. */
const OBJECT_IN_USE = "55006";

/** Whether `err` is Postgres refusing a row that a unique index already holds (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === UNIQUE_VIOLATION;
}

/**
 * Returns `serverUrl` with its database name replaced by `dbName`; host, port, credentials and
 * query parameters are kept.
 *
 * @example databaseUrlFor("postgres://u:p@h:5432/postgres?sslmode=require", "ledger")
 *   // → "postgres://u:p@h:5432/ledger?sslmode=require"
 */
export function databaseUrlFor(serverUrl: string, dbName: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${encodeURIComponent(dbName)}`;
  return url.toString();
}

/** The database name of a connection URL (decoded). Throws when the URL names none. */
export function databaseNameOf(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
  if (!name) throw new Error(`database URL names no database: ${redactUrl(url)}`);
  return name;
}

/** The URL with its password replaced by `***`, for log lines and error messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "<unparseable url>";
  }
}

/** Quotes an SQL identifier (database names cannot be bound as parameters). */
function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Runs `fn` with a client connected to `connectionString`, and closes it. */
async function withClient<R>(connectionString: string, fn: (c: pg.Client) => Promise<R>): Promise<R> {
  const client = new pg.Client({ connectionString });
  client.on("error", () => undefined); // a dropped connection surfaces as the failing query's error
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Runs `fn` with a client connected to the `postgres` database of the server `url` points at. */
const withMaintenanceClient = <R>(url: string, fn: (c: pg.Client) => Promise<R>) => withClient(databaseUrlFor(url, "postgres"), fn);

/** Whether the database `url` names exists: connecting to it succeeds, or fails with invalid_catalog_name. */
async function databaseExists(url: string): Promise<boolean> {
  try {
    return await withClient(url, async () => true);
  } catch (err) {
    if ((err as { code?: string }).code === INVALID_CATALOG_NAME) return false;
    throw err;
  }
}

/**
 * Creates the database `url` names when it does not exist yet. Safe when several processes race:
 * the loser's duplicate_database / unique_violation error is ignored. An existing database is
 * found by connecting to it: only a missing one needs the server's `postgres` database (and
 * CREATEDB), which a user confined to its own database, or a pooler, may not offer.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseNameOf(url);
  if (await databaseExists(url)) return;
  await withMaintenanceClient(url, async (c) => {
    const found = await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount) return;
    try {
      await c.query(`CREATE DATABASE ${quoteIdent(name)}`);
    } catch (err) {
      if ((err as { code?: string }).code !== DUPLICATE_DATABASE && !isUniqueViolation(err)) throw err;
    }
  });
}

/**
 * Drops the database `url` names, if it exists, after terminating the other sessions connected
 * to it. Retries a few times when a session reconnects in between.
 */
export async function dropDatabase(url: string): Promise<void> {
  const name = databaseNameOf(url);
  await withMaintenanceClient(url, async (c) => {
    for (let attempt = 1; ; attempt++) {
      await c.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [name],
      );
      try {
        await c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)}`);
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== OBJECT_IN_USE || attempt >= 5) throw err;
        await new Promise((r) => setTimeout(r, 50 * attempt));
      }
    }
  });
}

/** Anything `pingDatabase` can probe: the unit's database (a kit PgDb), or a pg pool or client. */
export type Pingable = PgDb<any> | Pick<pg.Pool, "query">;

/**
 * Readiness probe: runs `SELECT 1` and resolves `true` when it answers within `timeoutMs`,
 * `false` otherwise (error, timeout, closed pool). Never throws.
 */
export async function pingDatabase(db: Pingable, timeoutMs: number): Promise<boolean> {
  return succeedsWithin("query" in db ? db.query("SELECT 1") : sql`SELECT 1`.execute(db), timeoutMs);
}
