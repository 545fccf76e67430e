import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../src/embedded-postgres";

async function query<T extends Record<string, unknown>>(url: string, sql: string, database?: string): Promise<T[]> {
  const target = new URL(url);
  if (database) target.pathname = `/${database}`;
  const client = new Client({ connectionString: target.toString(), connectionTimeoutMillis: 5_000 });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

describe("startEmbeddedPostgres", () => {
  let dir: string;
  let server: EmbeddedPostgres | undefined;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "pgw-embedded-pg-"));
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("starts, answers SELECT 1, stops, and a second start reuses the data and the port", async () => {
    const dataDir = path.join(dir, "postgres");

    server = await startEmbeddedPostgres({ dataDir });
    const first = server;
    expect(first.port).not.toBe(5432);
    expect(first.url).toBe(`postgres://postgres:postgres@127.0.0.1:${first.port}/postgres`);
    expect(await query(first.url, "SELECT 1 AS one")).toEqual([{ one: 1 }]);

    await query(first.url, "CREATE DATABASE pgw_probe");
    await query(first.url, "CREATE TABLE kept (id int PRIMARY KEY, note text)", "pgw_probe");
    await query(first.url, "INSERT INTO kept VALUES (1, 'survives a restart')", "pgw_probe");
    expect(await query(first.url, "SHOW server_encoding")).toEqual([{ server_encoding: "UTF8" }]);

    await first.stop();
    server = undefined;
    await expect(query(first.url, "SELECT 1")).rejects.toThrow();

    server = await startEmbeddedPostgres({ dataDir });
    expect(server.port).toBe(first.port);
    expect(await query(server.url, "SELECT id, note FROM kept", "pgw_probe")).toEqual([{ id: 1, note: "survives a restart" }]);
    await server.stop();
    server = undefined;
  });

  test("a second start moves to another port when the stored one is taken", async () => {
    const dataDir = path.join(dir, "postgres");
    const stored = Number(fs.readFileSync(path.join(dataDir, "pgw-port"), "utf8"));
    const net = await import("node:net");
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen({ port: stored, host: "127.0.0.1" }, () => resolve()));
    try {
      server = await startEmbeddedPostgres({ dataDir });
      expect(server.port).not.toBe(stored);
      expect(server.port).not.toBe(5432);
      expect(await query(server.url, "SELECT count(*)::int AS n FROM kept", "pgw_probe")).toEqual([{ n: 1 }]);
      await server.stop();
      server = undefined;
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
