import { env, loadConfig, runMain, runService } from "@pgw/kit";
import path from "node:path";
import { startStatusConsumer, statusConsumerName } from "./events";
import { routes, SERVICE_NAMES } from "./routes";
import { createDb } from "./store";

/**
 * Starts the ledger unit with the given environment. Besides the kit's variables:
 * LEDGER_STATUS_CONSUMER names the durable consumer of status events (default: one per database,
 * see statusConsumerName).
 */
export function startLedger(source: NodeJS.ProcessEnv = process.env) {
  const { DATABASE_URL, LEDGER_STATUS_CONSUMER } = loadConfig(
    { DATABASE_URL: env.url(undefined, ["postgres:", "postgresql:"]), LEDGER_STATUS_CONSUMER: env.string().optional() },
    source,
  );
  const durable = LEDGER_STATUS_CONSUMER || statusConsumerName(DATABASE_URL);
  return runService(
    {
      name: "ledger",
      grpcPort: 50053,
      healthPort: 9093,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      createDb,
      serviceNames: SERVICE_NAMES,
      routes: ({ db, log }) => routes({ db, log }),
      background: async ({ db, nc, log }) => [await startStatusConsumer({ db, nc, log, durable })],
    },
    source,
  );
}

if (require.main === module) runMain(() => startLedger());
