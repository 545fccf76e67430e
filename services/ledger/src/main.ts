import { createClient } from "@connectrpc/connect";
import { createPeerTransport, env, loadConfig, loadGrpcTls, NotifiedCache, operationsStatusEvents, runMain, runService, startConsumer, startReconciler } from "@pgw/kit";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import path from "node:path";
import { statusConsumerOptions } from "./events";
import { startOrphanReserveSweep } from "./jobs/orphan-reserves";
import { ACCESS, routes } from "./routes";
import type { Tariff } from "./domain/tariff";
import { cachedTariffs, TARIFFS_CHANNEL } from "./store/tariffs";

/** Starts the ledger unit with the given environment (the kit's service variables and the ledger's own). */
export async function startLedger(source: NodeJS.ProcessEnv = process.env) {
  const { OPERATIONS_URL, ORPHAN_RESERVE_AGE_MS, ORPHAN_RESERVE_SWEEP_MS } = loadConfig(
    {
      OPERATIONS_URL: env.url("http://127.0.0.1:50051"),
      /** A reserve held this long for an operation operations does not know is released (orphan-reserves.ts). */
      ORPHAN_RESERVE_AGE_MS: env.int(600_000, 1000),
      ORPHAN_RESERVE_SWEEP_MS: env.int(300_000, 100),
    },
    source,
  );
  const grpcTls = loadGrpcTls(source);
  const tariffCache = new NotifiedCache<string, Tariff | null>();
  return runService(
    {
      name: "ledger",
      grpcTls,
      grpcPort: 50053,
      healthPort: 9093,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      access: ACCESS,
      routes: ({ sql, log }) => routes({ db: sql, log, quoteTariffs: cachedTariffs(sql, tariffCache) }),
      background: async ({ sql, nc, log, databaseUrl }) => {
        const options = statusConsumerOptions({ db: sql, nc, log });
        const orphans = { db: sql, log, operations: createClient(OperationsService, createPeerTransport(OPERATIONS_URL, { tls: grpcTls })), everyMs: ORPHAN_RESERVE_SWEEP_MS, ageMs: ORPHAN_RESERVE_AGE_MS };
        return [
          await startConsumer(options),
          startReconciler({ ...options, source: operationsStatusEvents(OPERATIONS_URL, grpcTls) }),
          startOrphanReserveSweep(orphans),
          tariffCache.listen(databaseUrl, TARIFFS_CHANNEL, log),
        ];
      },
    },
    source,
  );
}

if (require.main === module) runMain(() => startLedger());
