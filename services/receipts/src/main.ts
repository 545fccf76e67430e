import { runMain, runService } from "@pgw/kit";
import path from "node:path";
import { routes, SERVICE_NAMES } from "./routes";
import { createDb } from "./store";

/** Starts the receipts unit with the given environment. */
export function startReceipts(source: NodeJS.ProcessEnv = process.env) {
  return runService(
    {
      name: "receipts",
      grpcPort: 50054,
      healthPort: 9094,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      createDb,
      serviceNames: SERVICE_NAMES,
      routes: () => routes(),
    },
    source,
  );
}

if (require.main === module) runMain(() => startReceipts());
