import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { migrate, pendingMigrations, MIGRATION_LOCK_KEY } from "@pgw/kit/db";
import { TestDatabases, memoryLog } from "@pgw/kit/testing";

const FIXTURES = path.join(__dirname, "fixtures", "migrations");
const NAMES = ["20240101000000_init", "20240102000000_add_items", "20240103000000_seed"];
const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

const dbs = new TestDatabases("mig");
const tmpDirs: string[] = [];

/** A writable copy of the fixtures, limited to the first `count` migrations. */
function copyFixtures(count = NAMES.length): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "kit-mig-"));
  tmpDirs.push(dir);
  for (const name of NAMES.slice(0, count)) cpSync(path.join(FIXTURES, name), path.join(dir, name), { recursive: true });
  return dir;
}

afterAll(async () => {
  await dbs.dropAll();
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

interface Row {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  applied_steps_count: number;
  logs: string | null;
}

async function bookkeeping(url: string): Promise<Row[]> {
  const pool = dbs.pool(url, 1);
  const res = await pool.query<Row>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at, applied_steps_count, logs
       FROM "_prisma_migrations" ORDER BY migration_name`,
  );
  return res.rows;
}

test("applies migrations in folder order with Prisma's bookkeeping, then nothing on a second run", async () => {
  const url = await dbs.create();
  const log = memoryLog();
  const first = await migrate(url, FIXTURES, log);
  expect(first.applied).toEqual(NAMES);
  expect(log.lines.filter((l) => l.msg === "migration applied").map((l) => (l.obj as { migration: string }).migration)).toEqual(NAMES);

  const rows = await bookkeeping(url);
  expect(rows.map((r) => r.migration_name)).toEqual(NAMES);
  for (const r of rows) {
    expect(r.checksum).toBe(sha256(path.join(FIXTURES, r.migration_name, "migration.sql")));
    expect(r.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(r.finished_at).toBeInstanceOf(Date);
    expect(r.rolled_back_at).toBeNull();
    expect(r.applied_steps_count).toBe(1);
  }

  // The table has exactly Prisma's columns and types.
  const pool = dbs.pool(url, 1);
  const cols = await pool.query(
    `SELECT column_name, data_type, character_maximum_length AS len, is_nullable
       FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
  );
  expect(cols.rows).toEqual([
    { column_name: "id", data_type: "character varying", len: 36, is_nullable: "NO" },
    { column_name: "checksum", data_type: "character varying", len: 64, is_nullable: "NO" },
    { column_name: "finished_at", data_type: "timestamp with time zone", len: null, is_nullable: "YES" },
    { column_name: "migration_name", data_type: "character varying", len: 255, is_nullable: "NO" },
    { column_name: "logs", data_type: "text", len: null, is_nullable: "YES" },
    { column_name: "rolled_back_at", data_type: "timestamp with time zone", len: null, is_nullable: "YES" },
    { column_name: "started_at", data_type: "timestamp with time zone", len: null, is_nullable: "NO" },
    { column_name: "applied_steps_count", data_type: "integer", len: null, is_nullable: "NO" },
  ]);

  const second = await migrate(url, FIXTURES);
  expect(second.applied).toEqual([]);
  expect(await bookkeeping(url)).toHaveLength(3);
  const seeded = await pool.query(`SELECT count(*)::int AS n FROM "widgets"`);
  expect(seeded.rows[0].n).toBe(1);
});

test("five concurrent migrate calls on a fresh database apply each migration exactly once", async () => {
  const url = await dbs.create();
  const results = await Promise.all(Array.from({ length: 5 }, () => migrate(url, FIXTURES)));
  const applied = results.flatMap((r) => r.applied).sort();
  expect(applied).toEqual(NAMES);

  const pool = dbs.pool(url, 1);
  const counts = await pool.query(
    `SELECT migration_name, count(*)::int AS n FROM "_prisma_migrations" GROUP BY migration_name ORDER BY migration_name`,
  );
  expect(counts.rows).toEqual(NAMES.map((migration_name) => ({ migration_name, n: 1 })));
  const tables = await pool.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
  );
  expect(tables.rows.map((r) => r.table_name)).toEqual(["_prisma_migrations", "items", "widgets"]);
  const seeded = await pool.query(`SELECT (SELECT count(*) FROM widgets)::int AS w, (SELECT count(*) FROM items)::int AS i`);
  expect(seeded.rows[0]).toEqual({ w: 1, i: 1 });
  // The advisory lock is released.
  const locks = await pool.query(`SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'advisory' AND objid = $1
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, [
    MIGRATION_LOCK_KEY,
  ]);
  expect(locks.rows[0].n).toBe(0);
});

test("refuses an applied migration whose file changed, naming it, and applies nothing", async () => {
  const url = await dbs.create();
  const dir = copyFixtures(2);
  await migrate(url, dir);
  writeFileSync(path.join(dir, NAMES[1], "migration.sql"), "-- edited\n" + readFileSync(path.join(FIXTURES, NAMES[1], "migration.sql"), "utf8"));
  cpSync(path.join(FIXTURES, NAMES[2]), path.join(dir, NAMES[2]), { recursive: true });

  await expect(migrate(url, dir)).rejects.toThrow(/migration 20240102000000_add_items was modified/);
  expect((await bookkeeping(url)).map((r) => r.migration_name)).toEqual(NAMES.slice(0, 2));
});

test("a failing migration is rolled back with its bookkeeping row; earlier ones stay applied", async () => {
  const url = await dbs.create();
  const dir = copyFixtures(1);
  mkdirSync(path.join(dir, "20240105000000_broken"));
  writeFileSync(
    path.join(dir, "20240105000000_broken", "migration.sql"),
    `CREATE TABLE "half_done" ("id" INT);\nSELECT * FROM "no_such_table";\n`,
  );

  await expect(migrate(url, dir)).rejects.toThrow(/migration 20240105000000_broken failed: .*no_such_table/);
  expect((await bookkeeping(url)).map((r) => r.migration_name)).toEqual([NAMES[0]]);
  const pool = dbs.pool(url, 1);
  const half = await pool.query(`SELECT to_regclass('half_done')::text AS t`);
  expect(half.rows[0].t).toBeNull();
  expect(await pendingMigrations(url, dir)).toEqual(["20240105000000_broken"]);
});

test("pendingMigrations: everything without the table, the rest after a partial run, none when up to date", async () => {
  const url = await dbs.create();
  expect(await pendingMigrations(url, FIXTURES)).toEqual(NAMES);

  const partial = copyFixtures(1);
  expect((await migrate(url, partial)).applied).toEqual([NAMES[0]]);
  expect(await pendingMigrations(url, FIXTURES)).toEqual(NAMES.slice(1));

  expect((await migrate(url, FIXTURES)).applied).toEqual(NAMES.slice(1));
  expect(await pendingMigrations(url, FIXTURES)).toEqual([]);
});
