import { loadDataKeys } from "@pgw/kit/db";
import { loadGrpcTls } from "@pgw/kit/rpc";
import { followChangeSignal } from "@pgw/kit/events";
import { runMain, runService, unitMetricsRegistry } from "@pgw/kit/runtime";
import { TARIFFS_CHANGED_SUBJECT } from "@pgw/proto/subjects";
import path from "node:path";
import { loadOperationsConfig } from "./config";
import { createPeers } from "./connectors/peers";
import { consumeProviderUpdates } from "./events";
import type { DB } from "./generated/kysely/database";
import { applyProviderUpdate } from "./handlers/apply-provider-update";
import { abandonedAfterMs, startAbandonedCreatesSweep } from "./jobs/abandoned-creates";
import { registerOperationsMetrics } from "./metrics";
import { ACCESS, routes } from "./routes";
import { createDb, SEALED_COLUMNS, type Db } from "./store";

/** Starts the operations unit with the given environment. */
export async function startOperations(source: NodeJS.ProcessEnv = process.env) {
  const config = loadOperationsConfig(source);
  const keys = loadDataKeys(source);
  const grpcTls = loadGrpcTls(source);
  const registry = unitMetricsRegistry();
  const peers = createPeers(config.ROUTING_URL, config.LEDGER_URL, grpcTls, registry);
  return runService<Db, DB>(
    {
      name: "operations",
      grpcTls,
      grpcPort: 50051,
      healthPort: 9091,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      createDb,
      access: ACCESS,
      registry,
      sealed: { keys, columns: SEALED_COLUMNS },
      routes: ({ db, sql, log, localMode }) =>
        routes({
          db,
          sql,
          log,
          localMode,
          peers,
          keys,
          apiKeyHashSecret: config.API_KEY_HASH_SECRET,
          createDeadlineMs: config.CREATE_DEADLINE_MS,
          cancelDeadlineMs: config.CANCEL_DEADLINE_MS,
        }),
      background: async ({ nc, sql, log }) => {
        registerOperationsMetrics(registry, sql);
        return [
        await consumeProviderUpdates({ nc, sql, log, concurrency: config.PROVIDER_UPDATE_CONCURRENCY }, (tx, update, storedAt) => applyProviderUpdate(tx, update, storedAt, peers, log)),
        startAbandonedCreatesSweep({ sql, log, peers, olderThanMs: abandonedAfterMs(config.CREATE_DEADLINE_MS) }),
        followChangeSignal(nc, TARIFFS_CHANGED_SUBJECT, peers.tariffs, log),
        ];
      },
    },
    source,
  );
}

if (require.main === module) runMain(() => startOperations());
