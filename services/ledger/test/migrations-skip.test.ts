/**
 * MIGRATIONS=skip (Deployments behind a migration Job): the unit waits, not ready and serving
 * nothing, until the Job has applied its migrations, then starts. MIGRATIONS=only (the Job itself)
 * migrates and exits.
 */
import { createClient } from "@connectrpc/connect";
import { databaseUrlFor, ensureDatabase, migrate, pendingMigrations } from "@pgw/kit/db";
import { createPeerTransport } from "@pgw/kit/rpc";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { randomBytes, randomUUID } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { freePort } from "@pgw/kit/testing";
import { databaseServerUrl, dropDatabases, natsUrl, uniqueDatabaseUrl } from "../../../test/support/infra";
import { pollUntil } from "../../../test/support/poll";
import { startLedger } from "../src/main";

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const MIGRATIONS_DIR = path.join(__dirname, "..", "prisma", "migrations");

/**
 * How many sessions the database `url` names has had and ended, as the server counts them
 * (pg_stat_database, read from the server's own `postgres` database, so reading adds none).
 */
async function sessionsOf(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrlFor(databaseServerUrl(), "postgres") });
  await client.connect();
  try {
    const { rows } = await client.query<{ sessions: string | null }>(`SELECT "sessions" FROM pg_stat_database WHERE "datname" = $1`, [new URL(url).pathname.slice(1)]);
    return Number(rows[0]?.sessions ?? 0);
  } finally {
    await client.end();
  }
}

test("a ledger with MIGRATIONS=skip starts only once a migration job has applied its migrations", async () => {
  const url = uniqueDatabaseUrl("ledger_skip");
  await ensureDatabase(url); // the Job's or the operator's work; the unit never creates it in skip mode
  const healthPort = await freePort();
  let started: Awaited<ReturnType<typeof startLedger>> | undefined;
  const starting = startLedger({
    DATABASE_URL: url,
    MIGRATIONS: "skip",
    NATS_URL: natsUrl(),
    NATS_NAMESPACE: `t${randomBytes(5).toString("hex")}`,
    GRPC_PORT: "0",
    HEALTH_PORT: String(healthPort),
    LOG_LEVEL: "silent",
    LOCAL_MODE: "true",
  }).then((unit) => (started = unit));
  try {
    // Each look for pending migrations is a session of its own on the database. After two, the unit
    // has found them pending twice and gone on waiting; a unit that migrated by itself instead
    // would have applied them by its second session.
    expect(await pollUntil(() => sessionsOf(url), (n) => n >= 2, 15_000)).toBeGreaterThanOrEqual(2);
    expect(started).toBeUndefined();
    expect(await pendingMigrations(url, MIGRATIONS_DIR)).not.toEqual([]);
    expect((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status).toBe(503);

    await migrate(url, MIGRATIONS_DIR, silent);
    const unit = await starting;
    expect((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status).toBe(204);
    const ledger = createClient(LedgerService, createPeerTransport(`http://127.0.0.1:${unit.grpcPort}`));
    const { balances } = await ledger.getBalances({ shopId: randomUUID() });
    expect(balances.map((b) => [b.currency, b.balance])).toEqual([["RUB", "0.00"], ["USDT", "0.000000"]]);
  } finally {
    await (await starting.catch(() => undefined))?.stop();
    await dropDatabases([url]);
  }
}, 60_000);

test("a ledger with MIGRATIONS=only migrates and exits outside local mode without NATS credentials, as the Job runs it", async () => {
  const url = uniqueDatabaseUrl("ledger_only");
  try {
    const unit = await startLedger({ DATABASE_URL: url, MIGRATIONS: "only", HEALTH_PORT: "0", LOG_LEVEL: "silent" });
    await unit.stop();
    expect(unit.completed).toBe(true);
    expect(await pendingMigrations(url, MIGRATIONS_DIR)).toEqual([]);
  } finally {
    await dropDatabases([url]);
  }
}, 60_000);
