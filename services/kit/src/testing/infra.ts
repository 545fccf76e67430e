/** Test infrastructure shared by the kit's tests: server URLs, fresh databases, unique names. */
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import pg from "pg";
import { databaseUrlFor, dropDatabase, ensureDatabase } from "../db/database";
import { pgDbOn } from "../db/pg-db";

/** Postgres server URL (any database on it). */
export const PG_SERVER_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
/** Shared NATS server with JetStream. */
export const NATS_URL = process.env.NATS_URL || "nats://127.0.0.1:4222";

/** A short random token for unique database names, subjects and durables. */
export function uniqueToken(): string {
  return `${process.pid}_${randomBytes(4).toString("hex")}`;
}

/** Creates fresh databases and drops them all in {@link TestDatabases.dropAll}. */
export class TestDatabases {
  private readonly urls: string[] = [];
  private readonly pools: pg.Pool[] = [];

  constructor(private readonly prefix: string) {}

  /** Creates a new empty database and returns its URL. */
  async create(): Promise<string> {
    const url = databaseUrlFor(PG_SERVER_URL, `kit_${this.prefix}_${uniqueToken()}`);
    this.urls.push(url);
    await ensureDatabase(url);
    return url;
  }

  /** A pool on `url`, closed by dropAll. */
  pool(url: string, max = 10): pg.Pool {
    const pool = new pg.Pool({ connectionString: url, max });
    pool.on("error", () => undefined); // idle connections are terminated when the database is dropped
    this.pools.push(pool);
    return pool;
  }

  /** Creates a database with the outbox tables of `sql/outbox.sql` and returns a pool on it. */
  async createWithOutbox(extraSql = ""): Promise<{ url: string; pool: pg.Pool }> {
    const url = await this.create();
    const pool = this.pool(url);
    const outboxSql = await fs.readFile(path.join(__dirname, "../../sql/outbox.sql"), "utf8");
    await pool.query(outboxSql + "\n" + extraSql);
    return { url, pool };
  }

  async dropAll(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.end().catch(() => undefined)));
    for (const url of this.urls) await dropDatabase(url);
  }
}

/** Polls `probe` until it returns a truthy value, or throws after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T> | T,
  timeoutMs = 10_000,
  what = "condition",
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${String(last)})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A logger that records lines (and prints nothing), fitting the kit's log interfaces. */
export function memoryLog() {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const at = (level: string) => (obj: object, msg?: string) => {
    lines.push({ level, obj, msg });
  };
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** A statement a kit database ran, as its `onStatement` saw it. */
export interface RecordedStatement {
  sql: string;
  inTransaction: boolean;
}

/**
 * A kit database on `pool` that records every statement it runs, in order (`statements`, through
 * `onStatement`; clear it with `statements.length = 0`). `transactions()` counts those it opened
 * (their BEGINs) and `outside()` lists the statements it ran outside any transaction.
 */
export function recordingDb(pool: pg.Pool) {
  const statements: RecordedStatement[] = [];
  const db = pgDbOn(pool, { onStatement: (sql, inTransaction) => void statements.push({ sql, inTransaction }) });
  return {
    db,
    statements,
    transactions: () => statements.filter((s) => s.inTransaction && s.sql.startsWith("BEGIN")).length,
    outside: () => statements.filter((s) => !s.inTransaction).map((s) => s.sql),
  };
}
