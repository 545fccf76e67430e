/**
 * Applies Prisma-layout SQL migrations without Prisma's schema engine.
 *
 * Layout: `<migrationsDir>/<timestamp>_<name>/migration.sql`, applied in folder-name order.
 * Bookkeeping lives in Prisma's own `_prisma_migrations` table (same columns, sha256 hex checksum
 * of the file), so `prisma migrate status` / `prisma migrate deploy` stay usable where the engine
 * exists. Runs under the Postgres advisory lock Prisma Migrate itself takes, so replicas starting
 * together (or a concurrent `prisma migrate deploy`) apply each migration exactly once.
 */
import { createHash, randomUUID } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import pg from "pg";

/** Advisory lock key; the same one Prisma Migrate uses, so both exclude each other. */
export const MIGRATION_LOCK_KEY = 72707369;

/** Prisma's bookkeeping table, with exactly Prisma's columns. */
const CREATE_BOOKKEEPING_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/** The part of a logger the migrator uses (a pino logger fits). */
export interface MigrationLog {
  info(obj: object, msg?: string): void;
}

/** One migration folder read from disk. */
export interface MigrationFile {
  /** Folder name, e.g. `20250101000000_init`; Prisma's `migration_name`. */
  name: string;
  /** The content of `migration.sql`. */
  sql: string;
  /** sha256 hex of the file's bytes, as Prisma computes it. */
  checksum: string;
}

/** Result of {@link migrate}. */
export interface MigrateResult {
  /** Names of the migrations this call applied, in order (empty when up to date). */
  applied: string[];
}

interface BookkeepingRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/** A client whose unexpected disconnects surface as query errors instead of process crashes. */
function newClient(url: string): pg.Client {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => undefined);
  return client;
}

/** sha256 hex digest of a migration file's content. */
export function migrationChecksum(content: Buffer | string): string {
  return createHash("sha256").update(content).digest("hex");
}

/**
 * Reads `<dir>/<name>/migration.sql` for every sub-folder of `dir` that has one, sorted by
 * folder name. Files at the top level (e.g. `migration_lock.toml`) are ignored.
 */
export async function readMigrations(dir: string): Promise<MigrationFile[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const out: MigrationFile[] = [];
  for (const name of names) {
    let content: Buffer;
    try {
      content = await fs.readFile(path.join(dir, name, "migration.sql"));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw err;
    }
    out.push({ name, sql: content.toString("utf8"), checksum: migrationChecksum(content) });
  }
  return out;
}

/** Applied-migration rows, or `null` when the bookkeeping table does not exist. */
async function readBookkeeping(client: pg.Client): Promise<BookkeepingRow[] | null> {
  const exists = await client.query<{ t: string | null }>(
    `SELECT to_regclass('"_prisma_migrations"')::text AS t`,
  );
  if (!exists.rows[0]?.t) return null;
  const res = await client.query<BookkeepingRow>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
  );
  return res.rows;
}

/** Names applied successfully and not rolled back, with their checksums. */
function appliedChecksums(rows: BookkeepingRow[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const r of rows) {
    if (r.finished_at && !r.rolled_back_at) map.set(r.migration_name, r.checksum);
  }
  return map;
}

/**
 * Applies every pending migration of `migrationsDir` to the database at `url`.
 *
 * Each migration's SQL and its `_prisma_migrations` row commit in one transaction; a failing
 * migration is rolled back and rethrown (earlier ones stay applied). Throws, before applying
 * anything, when an applied migration's file changed (checksum mismatch) or when the table holds
 * a failed, not rolled back attempt (as `prisma migrate deploy` would).
 */
export async function migrate(url: string, migrationsDir: string, log?: MigrationLog): Promise<MigrateResult> {
  const migrations = await readMigrations(migrationsDir);
  const client = newClient(url);
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      await client.query(CREATE_BOOKKEEPING_TABLE);
      const rows = (await readBookkeeping(client)) ?? [];
      const failed = rows.find((r) => !r.finished_at && !r.rolled_back_at);
      if (failed) {
        throw new Error(
          `migration ${failed.migration_name} failed earlier and is not rolled back; resolve it before migrating`,
        );
      }
      const done = appliedChecksums(rows);
      for (const m of migrations) {
        const checksum = done.get(m.name);
        if (checksum !== undefined && checksum !== m.checksum) {
          throw new Error(
            `migration ${m.name} was modified after it was applied (checksum ${checksum} in the database, ${m.checksum} on disk)`,
          );
        }
      }
      for (const m of migrations) {
        if (done.has(m.name)) continue;
        await applyOne(client, m);
        applied.push(m.name);
        log?.info({ migration: m.name }, "migration applied");
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
  return { applied };
}

/** Runs one migration and writes its bookkeeping row in the same transaction. */
async function applyOne(client: pg.Client, m: MigrationFile): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query(m.sql);
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`,
      [randomUUID(), m.checksum, m.name],
    );
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`migration ${m.name} failed: ${reason}`, { cause: err });
  }
}

/**
 * Names of the migrations in `migrationsDir` not yet applied to the database at `url`, for
 * readiness checks. A missing bookkeeping table means everything is pending. Connection errors
 * are thrown (a readiness probe treats them as "not ready").
 */
export async function pendingMigrations(url: string, migrationsDir: string): Promise<string[]> {
  const migrations = await readMigrations(migrationsDir);
  const client = newClient(url);
  await client.connect();
  try {
    const rows = await readBookkeeping(client);
    const done = appliedChecksums(rows ?? []);
    return migrations.filter((m) => !done.has(m.name)).map((m) => m.name);
  } finally {
    await client.end().catch(() => undefined);
  }
}
