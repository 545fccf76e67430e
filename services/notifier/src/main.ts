import { runMain, runService } from "@pgw/kit";
import path from "node:path";
import { routes, SERVICE_NAMES } from "./routes";
import { createDb } from "./store";

/** Starts the notifier unit with the given environment. */
export function startNotifier(source: NodeJS.ProcessEnv = process.env) {
  return runService(
    {
      name: "notifier",
      grpcPort: 50055,
      healthPort: 9095,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      createDb,
      serviceNames: SERVICE_NAMES,
      routes: () => routes(),
    },
    source,
  );
}

if (require.main === module) runMain(() => startNotifier());
