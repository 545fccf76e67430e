import { runMain, runService } from "@pgw/kit";
import path from "node:path";
import { loadNotifierConfig } from "./config";
import { receiptsEvidenceSource } from "./connectors/evidence";
import { createHttpConnector } from "./connectors/webhook-http";
import { listenForDue } from "./due-listener";
import { DURABLES, startShopConsumer, startStatusConsumer } from "./events";
import { deliveryMetrics } from "./metrics";
import { routes, SERVICE_NAMES } from "./routes";
import { createDb } from "./store";
import { DeliveryWorker } from "./worker";

/** Margin of a delivery's lease beyond the HTTP deadline (recording the outcome, clock skew). */
const LEASE_MARGIN_MS = 50_000;

/** Starts the notifier unit with the given environment (variables: see config.ts). */
export function startNotifier(source: NodeJS.ProcessEnv = process.env) {
  const config = loadNotifierConfig(source);
  let worker: DeliveryWorker | undefined;
  return runService(
    {
      name: "notifier",
      grpcPort: 50055,
      healthPort: 9095,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      createDb,
      serviceNames: SERVICE_NAMES,
      routes: ({ db, log }) => routes({ db, log, wake: () => worker?.wake() }),
      background: async ({ db, nc, log, registry, localMode }) => {
        const connector = createHttpConnector({ localMode });
        const w = new DeliveryWorker({
          db,
          log,
          metrics: deliveryMetrics(registry),
          post: connector.post,
          schedule: config.retrySchedule,
          concurrency: config.WEBHOOK_CONCURRENCY,
          perShopConcurrency: config.WEBHOOK_PER_SHOP_CONCURRENCY,
          pollMs: config.WEBHOOK_POLL_MS,
          timeoutMs: config.WEBHOOK_TIMEOUT_MS,
          leaseMs: config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS,
        });
        worker = w;
        w.start();
        const listener = listenForDue(config.DATABASE_URL, log, () => w.wake());
        const evidence = receiptsEvidenceSource(config.RECEIPTS_URL, config.EVIDENCE_TIMEOUT_MS, log);
        const status = await startStatusConsumer({ db, nc, log, evidence }, config.NOTIFIER_STATUS_CONSUMER || DURABLES.status);
        const shops = await startShopConsumer({ db, nc, log }, config.NOTIFIER_SHOP_CONSUMER || DURABLES.shops);
        return [
          status,
          shops,
          listener,
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
