import { loadDataKeys, type PgDb } from "@pgw/kit/db";
import { startConsumer } from "@pgw/kit/events";
import { loadGrpcTls } from "@pgw/kit/rpc";
import { runMain, runService } from "@pgw/kit/runtime";
import path from "node:path";
import { loadNotifierConfig } from "./config";
import { carriedEvidenceSource, receiptsEvidenceSource } from "./connectors/evidence";
import { operationsNumberSource } from "./connectors/operation-number";
import { createHttpConnector } from "./connectors/webhook-http";
import { withFreshReceiptLinks } from "./domain/receipt-links";
import { retryHorizonMs } from "./domain/retry-schedule";
import { SHOPS_DURABLE, STATUS_CONSUMERS, startShopConsumer, statusConsumerOptions } from "./events";
import type { DB } from "./generated/kysely/database";
import { deliveryWorkerSettings, startDeliveryWorker, type DeliveryWorker } from "./jobs/delivery-worker";
import { startStatusReconciliation } from "./jobs/status-reconciliation";
import { startWaitingSweep } from "./jobs/waiting-sweep";
import { deliveryMetrics, registerDeliveryBacklog } from "./jobs/delivery-metrics";
import { ACCESS, routes } from "./routes";
import { DUE_CHANNEL, SEALED_COLUMNS } from "./store";

/** How often the waiting deliveries are swept (jobs/waiting-sweep.ts). */
const WAITING_SWEEP_MS = 60_000;

/** Starts the notifier unit with the given environment (variables: see config.ts). */
export async function startNotifier(source: NodeJS.ProcessEnv = process.env) {
  const config = loadNotifierConfig(source);
  const keys = loadDataKeys(source);
  const grpcTls = loadGrpcTls(source);
  let worker: DeliveryWorker | undefined;
  // Everything runs on the unit's one pg pool (DB_POOL_SIZE): RPCs, the worker, the sweep, and the
  // consumers, whose transactions hold a connection only while they write (what they ask of other
  // units they ask before, in `prepare`).
  return runService<PgDb<DB>, DB>(
    {
      name: "notifier",
      grpcTls,
      grpcPort: 50055,
      healthPort: 9095,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      access: ACCESS,
      sealed: { keys, columns: SEALED_COLUMNS },
      routes: ({ sql, log }) => routes({ db: sql, log, keys, wake: () => worker?.wake() }),
      background: async ({ nc, sql, log, registry, localMode }) => {
        const metrics = deliveryMetrics(registry);
        registerDeliveryBacklog(registry, sql);
        const connector = createHttpConnector({ localMode });
        const w = startDeliveryWorker({
          db: sql,
          keys,
          log,
          metrics,
          post: connector.post,
          bodyAt: (payload, now) => withFreshReceiptLinks(payload, config.RECEIPT_URL_SECRET, now),
          ...deliveryWorkerSettings(config),
        });
        worker = w;
        // Deliveries this process makes due wake its worker at commit (store wakeWorkerOnCommit).
        sql.onCommit(DUE_CHANNEL, () => w.wake());
        const sweep = startWaitingSweep({ db: sql, log, metrics, horizonMs: retryHorizonMs(config.retrySchedule), everyMs: WAITING_SWEEP_MS, wake: () => w.wake() });
        const links = { baseUrl: config.PUBLIC_BASE_URL, secret: config.RECEIPT_URL_SECRET };
        const evidence = carriedEvidenceSource(links, receiptsEvidenceSource(config.RECEIPTS_URL, config.EVIDENCE_TIMEOUT_MS, log, grpcTls, registry));
        const numberOf = operationsNumberSource(config.OPERATIONS_URL, grpcTls, registry);
        const statusOptions = STATUS_CONSUMERS.map((consumer) => statusConsumerOptions({ db: sql, nc, log, keys, evidence, numberOf }, consumer, config.NOTIFIER_STATUS_CONCURRENCY));
        const statusConsumers = [];
        for (const options of statusOptions) statusConsumers.push(await startConsumer(options));
        // One reconciliation for both: they record under one name, and it replays every webhook status.
        const reconciliation = startStatusReconciliation(statusOptions[0], config.OPERATIONS_URL, grpcTls, registry);
        const shops = await startShopConsumer({ db: sql, nc, log }, SHOPS_DURABLE);
        return [
          ...statusConsumers,
          reconciliation,
          shops,
          sweep,
          {
            async stop() {
              await w.stop();
              connector.close();
            },
          },
        ];
      },
    },
    source,
  );
}

if (require.main === module) runMain(() => startNotifier());
