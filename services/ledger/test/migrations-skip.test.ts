/**
 * MIGRATIONS=skip (Deployments behind a migration Job): the unit waits, not ready and serving
 * nothing, until the Job has applied its migrations, then starts. MIGRATIONS=only (the Job itself)
 * migrates and exits.
 */
import { createClient } from "@connectrpc/connect";
import { createPeerTransport, ensureDatabase, migrate, pendingMigrations } from "@pgw/kit";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { randomBytes, randomUUID } from "node:crypto";
import path from "node:path";
import { freePort } from "../../kit/test/support/nats-server";
import { dropDatabases, natsUrl, uniqueDatabaseUrl } from "../../../test/support/infra";
import { startLedger } from "../src/main";

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const MIGRATIONS_DIR = path.join(__dirname, "..", "prisma", "migrations");

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
    await new Promise((r) => setTimeout(r, 1500));
    expect(started).toBeUndefined();
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
