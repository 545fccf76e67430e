import pg from "pg";
import { databaseNameOf, databaseUrlFor, dropDatabase, ensureDatabase, pingDatabase } from "@pgw/kit/db";
import { PG_SERVER_URL, TestDatabases, uniqueToken } from "@pgw/kit/testing";
import { pgDbOn } from "@pgw/kit/db";

const dbs = new TestDatabases("db");
afterAll(() => dbs.dropAll());

async function exists(name: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_SERVER_URL });
  await c.connect();
  try {
    return ((await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount ?? 0) > 0;
  } finally {
    await c.end();
  }
}

test("databaseUrlFor swaps only the database name", () => {
  expect(databaseUrlFor("postgres://u:p%40ss@db.example:6543/postgres?sslmode=require", "ledger")).toBe(
    "postgres://u:p%40ss@db.example:6543/ledger?sslmode=require",
  );
  expect(databaseUrlFor("postgresql://127.0.0.1/", "x")).toBe("postgresql://127.0.0.1/x");
  expect(databaseNameOf("postgres://h/some%20db")).toBe("some db");
  expect(() => databaseNameOf("postgres://h/")).toThrow(/names no database/);
});

test("ensureDatabase opens the server's postgres database only to create a missing database", async () => {
  const name = `kit_db_own_${uniqueToken()}`;
  const url = databaseUrlFor(PG_SERVER_URL, name);
  // Which database each connection names, as the driver sees it (a user confined to its own
  // database, or a pooler, may offer no `postgres`).
  const connect = jest.spyOn(pg.Client.prototype, "connect");
  const databasesOpened = () => connect.mock.contexts.map((c) => (c as pg.Client & { connectionParameters: { database: string } }).connectionParameters.database);
  try {
    await ensureDatabase(url);
    expect(databasesOpened()).toEqual([name, "postgres"]);
    connect.mockClear();
    await ensureDatabase(url);
    expect(databasesOpened()).toEqual([name]);
  } finally {
    connect.mockRestore();
    await dropDatabase(url);
  }
});

test("ensureDatabase creates once even when racing, dropDatabase removes it despite open sessions", async () => {
  const name = `kit_db_race_${uniqueToken()}`;
  const url = databaseUrlFor(PG_SERVER_URL, name);
  try {
    await Promise.all(Array.from({ length: 5 }, () => ensureDatabase(url)));
    expect(await exists(name)).toBe(true);
    await ensureDatabase(url); // already there: no error, still there
    expect(await exists(name)).toBe(true);

    const session = new pg.Client({ connectionString: url });
    session.on("error", () => undefined);
    await session.connect();
    await dropDatabase(url);
    expect(await exists(name)).toBe(false);
    await session.end().catch(() => undefined);
    await dropDatabase(url); // absent: no error
  } finally {
    await dropDatabase(url);
  }
});

test("pingDatabase: true on a live pool or client, false on a dead server or an ended pool, within the timeout", async () => {
  const url = await dbs.create();
  const pool = dbs.pool(url, 2);
  expect(await pingDatabase(pool, 2000)).toBe(true);
  expect(await pingDatabase(pgDbOn(pool), 2000)).toBe(true);

  const dead = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/postgres", connectionTimeoutMillis: 5000 });
  dead.on("error", () => undefined);
  const started = Date.now();
  expect(await pingDatabase(dead, 300)).toBe(false);
  expect(Date.now() - started).toBeLessThan(2000);
  await dead.end();

  const ended = new pg.Pool({ connectionString: url });
  await ended.end();
  expect(await pingDatabase(ended, 1000)).toBe(false);

  // A query that outlives the timeout counts as not ready: here it waits for the pool's only connection.
  const busy = dbs.pool(url, 1);
  const holder = await busy.connect();
  try {
    expect(await pingDatabase(pgDbOn(busy), 100)).toBe(false);
  } finally {
    holder.release();
  }
});
