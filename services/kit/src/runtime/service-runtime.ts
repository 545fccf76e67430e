import type { ConnectRouter } from "@connectrpc/connect";
import type { AddressInfo } from "node:net";
import type { NatsConnection } from "nats";
import type pg from "pg";
import type { Registry } from "prom-client";
import { z } from "zod";
import { bindHost, env, loadConfig } from "./config";
import type { DataKeys } from "../db/data-keys";
import { ensureDatabase, pingDatabase } from "../db/database";
import { registerGrpcHealth } from "../rpc/grpc-health";
import type { GrpcTls } from "../rpc/grpc-tls";
import { startProbeServer, type HttpHandler, type ProbeState } from "../http/health-http";
import { startHousekeeping } from "../events/housekeeping";
import { createLogger, type Logger } from "./logger";
import { unitMetricsRegistry } from "./metrics";
import { migrate, pendingMigrations } from "../db/migrator";
import { attachEventMetrics } from "../events/event-metrics";
import { connectNats, ensureStream, loadNatsAuth, natsReady, natsUrlVariable, setNamespace } from "../events/nats";
import { OUTBOX_CHANNEL, OutboxRelay, type OutboxEvent } from "../events/outbox";
import { listenForNotify } from "../db/pg-listener";
import { countingStatements } from "../db/db-metrics";
import { createPgDb, type PgDb } from "../db/pg-db";
import { resealColumns, type SealedColumn } from "../db/reseal";
import { parseTeamGrants, type ServiceAccess } from "../rpc/rpc-access";
import { startRpcServer } from "../rpc/rpc-server";
import { runShutdownSteps } from "./shutdown-steps";
import { reportTracing } from "./tracing";

/** Variables every gRPC service reads. */
export const serviceConfigShape = (grpcPort: number, healthPort: number) => ({
  DATABASE_URL: env.databaseUrl(),
  NATS_URL: natsUrlVariable(),
  GRPC_PORT: env.port(grpcPort),
  HEALTH_PORT: env.port(healthPort),
  LOG_LEVEL: env.logLevel(),
  LOCAL_MODE: env.bool(false),
  SHUTDOWN_GRACE_MS: env.int(10000),
  /** auto: migrate at start; skip: wait (not ready, nothing started) until a migration job applied them; only: migrate and exit. */
  MIGRATIONS: z.enum(["auto", "skip", "only"]).default("auto"),
  NATS_STREAM_REPLICAS: env.int(1, 1),
  /** Connections of the unit's one pg pool, shared by its Kysely statements and Prisma Client. */
  DB_POOL_SIZE: env.int(10, 1),
  /** While events keep coming, the outbox relay waits this long between passes to batch them (ms). */
  OUTBOX_GATHER_MS: env.int(10, 0),
  /** Isolates deployments (or test stacks) sharing one NATS server: subjects pgw.<ns>.…, durables <ns>-…. */
  NATS_NAMESPACE: z.string().regex(/^[a-z0-9_]*$/, "must be lowercase letters, digits or _").default(""),
  /** Methods internal teams may call besides the reads: `team=package.Service/Method`, comma-separated (rpc-access.ts). */
  RPC_TEAM_GRANTS: z.string().optional(),
});

/** Something running in the background of a unit (relay, consumer, scheduler). */
export interface Stoppable {
  stop(): Promise<void>;
}

export interface ServiceDeps<Db, Tables = any> {
  log: Logger;
  /** The service's Prisma client (configuration CRUD), or `sql` itself when the unit has none. */
  db: Db;
  /** The unit's database: Kysely on its one pg pool, typed by `Tables` (pg-db.ts); the kit's outbox relay, consumers and housekeeping run on it too. */
  sql: PgDb<Tables>;
  nc: NatsConnection;
  registry: Registry;
  localMode: boolean;
  /** The database's URL, for connections of the unit's own (a LISTEN, `NotifiedCache.listen`). */
  databaseUrl: string;
}

export interface ServiceSpec<Db = PgDb, Tables = any> {
  name: string;
  grpcPort: number;
  healthPort: number;
  /** Mutual TLS of the unit's gRPC server and clients (loadGrpcTls, which its main calls for its peers too). */
  grpcTls: GrpcTls | null;
  /** Folder of Prisma-layout migrations (`<timestamp>_<name>/migration.sql`). */
  migrationsDir: string;
  /** The service's Prisma client, for a unit that uses the ORM; without it `db` is the unit's pg pool. */
  createDb?(pool: pg.Pool): Db & { $disconnect(): Promise<void> };
  /** The services `routes` registers and who may call each method (rpc-access.ts); their names are grpc.health.v1's too. */
  access: readonly ServiceAccess[];
  routes(deps: ServiceDeps<Db, Tables>): (router: ConnectRouter) => void;
  /** Consumers and schedulers started once the database and NATS are ready. */
  background?(deps: ServiceDeps<Db, Tables>): Promise<Stoppable[]>;
  /**
   * The columns the unit seals and its data keys (loadDataKeys): with DATA_RESEAL=only the unit
   * re-seals every value not under the active key, once its migrations are applied, and exits.
   */
  sealed?: { keys: DataKeys; columns: readonly SealedColumn[] };
  /**
   * Extra HTTP/1.1 handler on the health port (e.g. provider callbacks); answers false to fall
   * through to 404. Mounted once the database and NATS are ready (404 before).
   */
  http?(deps: ServiceDeps<Db, Tables>): HttpHandler;
  /** The unit's registry, when its main needs it before start (its peers' clients are timed there); else a new one. */
  registry?: Registry;
}

export interface RunningUnit<Db, Tables = any> {
  /** True when the unit only applied migrations (MIGRATIONS=only) and has nothing to serve. */
  completed?: boolean;
  grpcPort: number;
  healthPort: number;
  db: Db;
  /** The unit's database as Kysely (its pool): what tests read and arrange rows with. */
  sql: PgDb<Tables>;
  stop(): Promise<void>;
}

const retryDelayMs = (attempt: number) => Math.min(200 * 2 ** attempt, 5000);

/**
 * Creates the unit's database if missing and applies its migrations, retrying while the server is
 * unreachable (the unit's probes are up meanwhile and answer not-ready).
 */
export async function prepareDatabase(url: string, migrationsDir: string, log: Logger): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await ensureDatabase(url);
      const { applied } = await migrate(url, migrationsDir, log);
      if (applied.length) log.info({ applied }, "migrations applied");
      return;
    } catch (err) {
      log.warn({ err, attempt }, "database not ready; retrying");
      await new Promise((r) => setTimeout(r, retryDelayMs(attempt)));
    }
  }
}

/**
 * MIGRATIONS=skip: waits until a migration job has applied every migration this unit knows (the
 * unit's probes are up meanwhile and answer not-ready); nothing else starts before, so no query
 * of the new code meets the old schema.
 */
export async function awaitMigrations(url: string, migrationsDir: string, log: Logger): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const pending = await pendingMigrations(url, migrationsDir).catch((err: unknown) => (log.warn({ err, attempt }, "database not ready; retrying"), null));
    if (pending?.length === 0) return;
    if (pending) log.info({ pending }, "waiting for the migration job to apply these (MIGRATIONS=skip)");
    await new Promise((r) => setTimeout(r, retryDelayMs(attempt)));
  }
}

/**
 * Starts a gRPC service the way every service starts: probes first (ready only once the database is
 * migrated and NATS is connected), database created if missing and migrated (retrying while the
 * server is down), the outbox relay and its housekeeping, background consumers, then the RPC server
 * (rpc-server.ts) with health and reflection.
 */
export async function runService<Db = PgDb, Tables = any>(
  spec: ServiceSpec<Db, Tables>,
  source: NodeJS.ProcessEnv = process.env,
): Promise<RunningUnit<Db, Tables>> {
  const config = loadConfig(serviceConfigShape(spec.grpcPort, spec.healthPort), source);
  const resealOnly = spec.sealed !== undefined && loadConfig({ DATA_RESEAL: z.enum(["skip", "only"]).default("skip") }, source).DATA_RESEAL === "only";
  // A unit that only migrates or re-seals never connects to NATS (the migration Job has no NATS credentials).
  const natsAuth = config.MIGRATIONS === "only" || resealOnly ? {} : loadNatsAuth(source);
  const teamGrants = parseTeamGrants(config.RPC_TEAM_GRANTS, spec.access);
  const log = createLogger(spec.name, config.LOG_LEVEL);
  reportTracing(source, log);
  const registry = spec.registry ?? unitMetricsRegistry();

  let migrated = false;
  // Ready only once the gRPC server listens: start-up can wait on NATS indefinitely, and a probe
  // answered 204 meanwhile would send traffic (and a rolling update's go-ahead) to a closed port.
  let serving = false;
  // nats fails until the connection exists, so a start-up waiting for it says what it waits for.
  const state: ProbeState = { accepting: true, checks: { migrations: async () => migrated, nats: async () => false, grpc: async () => serving } };
  let extraHttp: HttpHandler | undefined;
  const host = bindHost(source);
  const probes = await startProbeServer(config.HEALTH_PORT, host, state, registry, (req, res) => (extraHttp ? extraHttp(req, res) : Promise.resolve(false)));

  const closeProbes = () => new Promise((r) => probes.close(r));
  if (config.MIGRATIONS === "skip") await awaitMigrations(config.DATABASE_URL, spec.migrationsDir, log);
  else await prepareDatabase(config.DATABASE_URL, spec.migrationsDir, log);
  migrated = true;

  // Both pools connect lazily: a unit that only migrates opens no connection through them.
  const sql = createPgDb<Tables>(config.DATABASE_URL, config.DB_POOL_SIZE, { onStatement: countingStatements(registry) });
  const prisma = spec.createDb?.(sql.pool);
  const db = (prisma ?? sql) as Db;
  const closeDb = () => Promise.all([prisma?.$disconnect(), sql.end()]);
  if (resealOnly) {
    const resealed = await resealColumns(sql, spec.sealed!.keys, spec.sealed!.columns);
    log.info({ resealed, data_key_id: spec.sealed!.keys.activeId }, "sealed values re-sealed under the active data key; exiting (DATA_RESEAL=only)");
  } else if (config.MIGRATIONS === "only") log.info("migrations applied; exiting (MIGRATIONS=only)");
  if (resealOnly || config.MIGRATIONS === "only") {
    return { completed: true, grpcPort: 0, healthPort: 0, db, sql, stop: async () => void (await Promise.all([closeDb(), closeProbes()])) };
  }
  const nc = await connectNats(config.NATS_URL, spec.name, log, natsAuth);
  setNamespace(nc, config.NATS_NAMESPACE);
  await ensureStream(nc, { replicas: config.NATS_STREAM_REPLICAS, log });
  attachEventMetrics(nc, sql, registry);
  state.checks.database = () => pingDatabase(sql, 1000);
  state.checks.nats = () => natsReady(nc, 1000);

  const relay = new OutboxRelay({ db: sql, nc, log, gatherMs: config.OUTBOX_GATHER_MS });
  relay.start();
  sql.onCommit<OutboxEvent>(OUTBOX_CHANNEL, (events) => relay.handOver(events));
  // Outbox rows this relay is not handed at commit (a transaction on another pool of the unit,
  // changeWithEvent inside a transaction, another process) wake it by NOTIFY.
  const relayWake = listenForNotify(config.DATABASE_URL, OUTBOX_CHANNEL, log, () => relay.nudge());
  const housekeeping = startHousekeeping({ db: sql, log });
  const deps: ServiceDeps<Db, Tables> = { log, db, sql, nc, registry, localMode: config.LOCAL_MODE, databaseUrl: config.DATABASE_URL };
  const background = (await spec.background?.(deps)) ?? [];
  extraHttp = spec.http?.(deps);
  const grpc = await startRpcServer(
    config.GRPC_PORT,
    host,
    (router) => {
      spec.routes(deps)(router);
      registerGrpcHealth(router, state, spec.access.map((a) => a.service.typeName));
    },
    log,
    registry,
    { tls: spec.grpcTls, access: { services: spec.access, grants: teamGrants } },
  );
  serving = true;
  log.info({ grpcPort: grpc.port, healthPort: config.HEALTH_PORT }, `${spec.name} ready`);

  return {
    grpcPort: grpc.port,
    healthPort: (probes.address() as AddressInfo).port,
    db,
    sql,
    async stop() {
      state.accepting = false;
      await runShutdownSteps(log, [
        ["rpc server", () => grpc.close(config.SHUTDOWN_GRACE_MS)],
        ...background.map((b, i) => [`background task ${i + 1} of ${background.length}`, () => b.stop()] as const),
        ["housekeeping", () => housekeeping.stop()],
        ["outbox wake-ups", () => relayWake.stop()],
        ["outbox relay", () => relay.stop()],
        ["nats drain", () => nc.drain().catch(() => undefined)],
        ["database pools", closeDb],
        ["probe server", closeProbes],
      ]);
      log.info(`${spec.name} stopped`);
    },
  };
}
