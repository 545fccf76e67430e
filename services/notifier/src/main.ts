import { createPgDb, loadDataKeys, loadGrpcTls, operationsStatusEvents, runMain, runService, startConsumer, startReconciler } from "@pgw/kit";
import path from "node:path";
import { loadNotifierConfig } from "./config";
import { receiptsEvidenceSource } from "./connectors/evidence";
import { operationsNumberSource } from "./connectors/operation-number";
import { createHttpConnector } from "./connectors/webhook-http";
import { SHOPS_DURABLE, STATUS_CONSUMERS, startShopConsumer, statusConsumerOptions } from "./events";
import { deliveryMetrics } from "./metrics";
import { ACCESS, routes } from "./routes";
import { DUE_CHANNEL, SEALED_COLUMNS } from "./store";
import { DeliveryWorker } from "./jobs/delivery-worker";
import { withFreshReceiptLinks } from "./domain/receipt-links";

/** Margin of a delivery's lease beyond the HTTP deadline (recording the outcome, clock skew). */
const LEASE_MARGIN_MS = 50_000;

/** Starts the notifier unit with the given environment (variables: see config.ts). */
export async function startNotifier(source: NodeJS.ProcessEnv = process.env) {
  const config = loadNotifierConfig(source);
  const keys = loadDataKeys(source);
  // Consumers, the queue and the RPCs run on plain pg pools (the kit's createPgDb): the queue and the
  // RPCs on the unit's own, the consumers on theirs. The two status consumers share it: the one for
  // awaiting_confirmation is rarely busy, and each holds a connection only for its transaction.
  const consumerDb = createPgDb(config.DATABASE_URL, config.NOTIFIER_STATUS_CONCURRENCY + 2);
  let worker: DeliveryWorker | undefined;
  const grpcTls = loadGrpcTls(source);
  const unit = await runService(
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
        const connector = createHttpConnector({ localMode });
        const w = new DeliveryWorker({
          db: sql,
          keys,
          log,
          metrics: deliveryMetrics(registry),
          post: connector.post,
          bodyAt: (payload, now) => withFreshReceiptLinks(payload, config.RECEIPT_URL_SECRET, now),
          schedule: config.retrySchedule,
          concurrency: config.WEBHOOK_CONCURRENCY,
          perShopConcurrency: config.WEBHOOK_PER_SHOP_CONCURRENCY,
          pollMs: config.WEBHOOK_POLL_MS,
          gatherMs: config.WEBHOOK_CLAIM_GATHER_MS,
          timeoutMs: config.WEBHOOK_TIMEOUT_MS,
          leaseMs: config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS,
        });
        worker = w;
        w.start();
        // Deliveries this process makes due wake its worker at commit (store.wakeWorkerOnCommit).
        for (const db of [sql, consumerDb]) db.onCommit(DUE_CHANNEL, () => w.wake());
        const evidence = receiptsEvidenceSource(config.RECEIPTS_URL, config.EVIDENCE_TIMEOUT_MS, log, grpcTls);
        const numberOf = operationsNumberSource(config.OPERATIONS_URL, grpcTls);
        const statusOptions = STATUS_CONSUMERS.map((consumer) => statusConsumerOptions({ db: consumerDb, nc, log, keys, evidence, numberOf }, consumer, config.NOTIFIER_STATUS_CONCURRENCY));
        const statusConsumers = [];
        for (const options of statusOptions) statusConsumers.push(await startConsumer(options));
        // One reconciler for both: they record under one name, and it replays every webhook status.
        const reconciler = startReconciler({ ...statusOptions[0], source: operationsStatusEvents(config.OPERATIONS_URL, grpcTls) });
        const shops = await startShopConsumer({ db: consumerDb, nc, log }, SHOPS_DURABLE);
        return [
          ...statusConsumers,
          reconciler,
          shops,
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
  return {
    ...unit,
    async stop() {
      await unit.stop();
      await consumerDb.end();
    },
  };
}

if (require.main === module) runMain(() => startNotifier());
