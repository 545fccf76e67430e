import { runMain, runService } from "@pgw/kit";
import path from "node:path";
import { startStatusConsumer } from "./events";
import { routes, SERVICE_NAMES } from "./routes";
import { createDb } from "./store";

/** Starts the ledger unit with the given environment (the kit's service variables only). */
export async function startLedger(source: NodeJS.ProcessEnv = process.env) {
  return runService(
    {
      name: "ledger",
      grpcPort: 50053,
      healthPort: 9093,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      createDb,
      serviceNames: SERVICE_NAMES,
      routes: ({ db, log }) => routes({ db, log }),
      background: async ({ db, nc, log }) => [await startStatusConsumer({ db, nc, log })],
    },
    source,
  );
}

if (require.main === module) runMain(() => startLedger());
