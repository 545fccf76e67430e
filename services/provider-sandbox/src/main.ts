import { setMaxListeners } from "node:events";
import Router from "@koa/router";
import { pingDatabase } from "@pgw/kit/db";
import { createHttpServer, listen, type ProbeState } from "@pgw/kit/http";
import { bindHost, createLogger, reportTracing, prepareDatabase, runMain, unitMetricsRegistry, type Logger } from "@pgw/kit/runtime";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { loadSandboxConfig } from "./config";
import { startCallbackDelivery } from "./jobs/callbacks";
import { startExpiryPoller } from "./jobs/expiry";
import { startScenarioChanges } from "./jobs/scenario-changes";
import { mountRoutes, type SandboxDeps } from "./routes";
import { createApp } from "./routes/app";
import { createDb, createStore } from "./store";

/**
 * Starts the provider sandbox (HTTP API + control API + probes on one port) with the given
 * environment (variables: config.ts); `log` replaces its stdout logger (tests read it).
 */
export async function startSandbox(source: NodeJS.ProcessEnv = process.env, log?: Logger) {
  const config = loadSandboxConfig(source);
  log ??= createLogger("provider-sandbox", config.LOG_LEVEL);
  reportTracing(source, log);
  const registry = unitMetricsRegistry();
  let migrated = false;
  const state: ProbeState = { accepting: true, checks: { migrations: async () => migrated } };
  const db = createDb(config.DATABASE_URL);
  const shutdown = new AbortController();
  // Every held (delayed or timing-out) request listens for shutdown: many at once is expected.
  setMaxListeners(0, shutdown.signal);
  const callbacks = startCallbackDelivery({
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
  const scenarioChanges = startScenarioChanges(deps.store, config.DATABASE_URL, log);
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
