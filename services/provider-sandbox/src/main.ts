import { setMaxListeners } from "node:events";
import Router from "@koa/router";
import { bindHost, createHttpServer, createLogger, env, listen, loadConfig, pingDatabase, prepareDatabase, runMain, unitMetricsRegistry, type ProbeState } from "@pgw/kit";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { createApp } from "./app";
import { createCallbackSender } from "./callbacks";
import { startExpiryPoller } from "./expiry";
import { mountRoutes, type SandboxDeps } from "./routes";
import { createDb, createStore } from "./store";

/** Environment of the sandbox; every variable has a default but DATABASE_URL. */
const configShape = {
  DATABASE_URL: env.databaseUrl(),
  HTTP_PORT: env.port(8090),
  LOG_LEVEL: env.logLevel(),
  /** Key of the X-Sandbox-Signature HMAC on callbacks. */
  CALLBACK_SECRET: env.string("sandbox-callback-secret"),
  CALLBACK_TIMEOUT_MS: env.int(5000, 1),
  /** First retry delay of a failed callback; 5 attempts in all, doubling: about 30 s by default. */
  CALLBACK_RETRY_BASE_MS: env.int(2000, 1),
  CALLBACK_ATTEMPTS: env.int(5, 1),
  /** How often lapsed requisites are looked for. */
  EXPIRY_POLL_MS: env.int(1000, 10),
  /** How long a create is held under an `accept: "timeout"` scenario. */
  TIMEOUT_HOLD_MS: env.int(60_000, 1),
};

/** Starts the provider sandbox (HTTP API + control API + probes on one port). */
export async function startSandbox(source: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(configShape, source);
  const log = createLogger("provider-sandbox", config.LOG_LEVEL);
  const registry = unitMetricsRegistry();
  let migrated = false;
  const state: ProbeState = { accepting: true, checks: { migrations: async () => migrated } };
  const db = createDb(config.DATABASE_URL);
  const shutdown = new AbortController();
  // Every held (delayed or timing-out) request listens for shutdown: many at once is expected.
  setMaxListeners(0, shutdown.signal);
  const callbacks = createCallbackSender({
    secret: config.CALLBACK_SECRET,
    timeoutMs: config.CALLBACK_TIMEOUT_MS,
    retryBaseMs: config.CALLBACK_RETRY_BASE_MS,
    attempts: config.CALLBACK_ATTEMPTS,
    log,
  });
  const deps: SandboxDeps = {
    store: createStore(db),
    callbacks,
    now: () => new Date(),
    newId: randomUUID,
    shutdown: shutdown.signal,
    holdMs: config.TIMEOUT_HOLD_MS,
  };
  const router = new Router();
  mountRoutes(router, deps);
  const server = createHttpServer(createApp(state, registry, router, log).callback());
  const port = await listen(server, config.HTTP_PORT, bindHost(source));

  await prepareDatabase(config.DATABASE_URL, path.join(__dirname, "..", "prisma", "migrations"), log);
  migrated = true;
  state.checks.database = () => pingDatabase(db, 1000);
  const expiry = startExpiryPoller(deps, config.EXPIRY_POLL_MS, log);
  const scenarioChanges = deps.store.listenForScenarioChanges(config.DATABASE_URL, log);
  log.info({ port }, "provider-sandbox ready");

  return {
    port,
    db,
    async stop() {
      state.accepting = false;
      shutdown.abort();
      await expiry.stop();
      await scenarioChanges.stop();
      await callbacks.stop();
      const closed = new Promise((r) => server.close(r));
      server.closeIdleConnections();
      // A request still open after a second (a caller that stopped mid-call) does not hold the stop.
      const force = setTimeout(() => server.closeAllConnections(), 1000);
      await closed;
      clearTimeout(force);
      await db.end();
    },
  };
}

if (require.main === module) runMain(() => startSandbox());
