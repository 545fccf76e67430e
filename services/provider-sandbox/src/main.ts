import Router from "@koa/router";
import { createLogger, env, listen, loadConfig, pingDb, prepareDatabase, runMain, type ProbeState } from "@pgw/kit";
import http from "node:http";
import path from "node:path";
import { collectDefaultMetrics, Registry } from "prom-client";
import { createApp } from "./app";
import { createDb } from "./store";

/** Starts the provider sandbox (HTTP API + control API + probes on one port). */
export async function startSandbox(source: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(
    {
      DATABASE_URL: env.url(undefined, ["postgres:", "postgresql:"]),
      HTTP_PORT: env.port(8090),
      LOG_LEVEL: env.logLevel(),
    },
    source,
  );
  const log = createLogger("provider-sandbox", config.LOG_LEVEL);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  let migrated = false;
  const state: ProbeState = { accepting: true, checks: { migrations: async () => migrated } };
  const server = http.createServer(createApp(state, registry, new Router()).callback());
  const port = await listen(server, config.HTTP_PORT);

  await prepareDatabase(config.DATABASE_URL, path.join(__dirname, "..", "prisma", "migrations"), log);
  migrated = true;
  const db = createDb(config.DATABASE_URL);
  state.checks.database = () => pingDb(db);
  log.info({ port }, "provider-sandbox ready");

  return {
    port,
    db,
    async stop() {
      state.accepting = false;
      await new Promise((r) => server.close(r));
      await db.$disconnect();
    },
  };
}

if (require.main === module) runMain(() => startSandbox());
