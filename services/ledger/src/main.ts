import { env, loadConfig, operationsStatusEvents, runMain, runService, startConsumer, startReconciler } from "@pgw/kit";
import path from "node:path";
import { statusConsumerOptions } from "./events";
import { routes, SERVICE_NAMES } from "./routes";

/** Starts the ledger unit with the given environment (the kit's service variables and OPERATIONS_URL). */
export async function startLedger(source: NodeJS.ProcessEnv = process.env) {
  const { OPERATIONS_URL } = loadConfig({ OPERATIONS_URL: env.url("http://127.0.0.1:50051") }, source);
  return runService(
    {
      name: "ledger",
      grpcPort: 50053,
      healthPort: 9093,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      serviceNames: SERVICE_NAMES,
      routes: ({ sql, log }) => routes({ db: sql, log }),
      background: async ({ sql, nc, log }) => {
        const options = statusConsumerOptions({ db: sql, nc, log });
        return [await startConsumer(options), startReconciler({ ...options, source: operationsStatusEvents(OPERATIONS_URL) })];
      },
    },
    source,
  );
}

if (require.main === module) runMain(() => startLedger());
