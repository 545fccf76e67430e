import type { Tariff } from "@pgw/contracts";
import { NotifiedCache } from "@pgw/kit/db";
import { changeSignal, startConsumer } from "@pgw/kit/events";
import { loadGrpcTls } from "@pgw/kit/rpc";
import { TARIFFS_CHANGED_SUBJECT } from "@pgw/proto/subjects";
import { runMain, runService, unitMetricsRegistry } from "@pgw/kit/runtime";
import path from "node:path";
import { loadLedgerConfig } from "./config";
import { connectOperations } from "./connectors/operations";
import { statusConsumerOptions } from "./events";
import type { DB } from "./generated/kysely/database";
import { startOrphanReserveSweep } from "./jobs/orphan-reserves";
import { startStatusReconciler } from "./jobs/status-reconciler";
import { ledgerMetrics, registerBookMetrics } from "./metrics";
import { ACCESS, routes } from "./routes";
import type { Db } from "./store";
import { cachedTariffs, TARIFFS_CHANNEL } from "./store/tariffs";

/** Starts the ledger unit with the given environment (the kit's service variables and the ledger's own). */
export async function startLedger(source: NodeJS.ProcessEnv = process.env) {
  const config = loadLedgerConfig(source);
  const grpcTls = loadGrpcTls(source);
  const tariffCache = new NotifiedCache<string, Tariff | null>();
  const registry = unitMetricsRegistry();
  const metrics = ledgerMetrics(registry);
  return runService<Db, DB>(
    {
      name: "ledger",
      grpcTls,
      grpcPort: 50053,
      healthPort: 9093,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      access: ACCESS,
      registry,
      routes: ({ sql, log }) => routes({ db: sql, log, quoteTariffs: cachedTariffs(sql, tariffCache), metrics }),
      background: async ({ sql, nc, log, databaseUrl }) => {
        registerBookMetrics(registry, sql);
        const operations = connectOperations(config.OPERATIONS_URL, grpcTls, registry);
        const status = statusConsumerOptions({ db: sql, nc, log });
        const orphans = { db: sql, log, operations: operations.client, everyMs: config.ORPHAN_RESERVE_SWEEP_MS, ageMs: config.ORPHAN_RESERVE_AGE_MS, metrics };
        const tariffsChanged = changeSignal(nc, TARIFFS_CHANGED_SUBJECT);
        return [
          await startConsumer(status),
          startStatusReconciler(status, operations.statusEvents),
          startOrphanReserveSweep(orphans),
          // Operations keeps the tariffs it was quoted: it drops them at this signal.
          tariffCache.listen(databaseUrl, TARIFFS_CHANNEL, log, tariffsChanged.signal),
          tariffsChanged,
        ];
      },
    },
    source,
  );
}

if (require.main === module) runMain(() => startLedger());
