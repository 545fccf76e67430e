import { env, loadConfig, localDefault, runMain, runService } from "@pgw/kit";
import path from "node:path";
import { routes, SERVICE_NAMES } from "./routes";
import { createDb } from "./store";

/** Starts the operations unit with the given environment. */
export async function startOperations(source: NodeJS.ProcessEnv = process.env) {
  const { API_KEY_HASH_SECRET } = loadConfig({ API_KEY_HASH_SECRET: env.string(localDefault(source, "local-dev-api-key-hash-secret")) }, source);
  return runService(
    {
      name: "operations",
      grpcPort: 50051,
      healthPort: 9091,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      createDb,
      serviceNames: SERVICE_NAMES,
      routes: ({ db, relay }) => routes({ db, relay, apiKeyHashSecret: API_KEY_HASH_SECRET }),
    },
    source,
  );
}

if (require.main === module) runMain(() => startOperations());
