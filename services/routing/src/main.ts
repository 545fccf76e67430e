import { runMain, runService } from "@pgw/kit";
import path from "node:path";
import { routes, SERVICE_NAMES } from "./routes";
import { createDb } from "./store";

/** Starts the routing unit with the given environment. */
export function startRouting(source: NodeJS.ProcessEnv = process.env) {
  return runService(
    {
      name: "routing",
      grpcPort: 50052,
      healthPort: 9092,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      createDb,
      serviceNames: SERVICE_NAMES,
      routes: () => routes(),
    },
    source,
  );
}

if (require.main === module) runMain(() => startRouting());
