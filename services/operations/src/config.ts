import { env, loadConfig } from "@pgw/kit/runtime";

/** Environment of the operations unit beyond what every service reads (see the kit's serviceConfigShape). */
export function loadOperationsConfig(source: NodeJS.ProcessEnv) {
  return loadConfig(
    {
      API_KEY_HASH_SECRET: env.secret(source, "local-dev-api-key-hash-secret"),
      ROUTING_URL: env.url("http://127.0.0.1:50052"),
      LEDGER_URL: env.url("http://127.0.0.1:50053"),
      CREATE_DEADLINE_MS: env.int(15000, 100),
      CANCEL_DEADLINE_MS: env.int(5000, 100),
      /** Provider updates applied at once (each holds a pool connection while it runs). */
      PROVIDER_UPDATE_CONCURRENCY: env.int(4, 1),
    },
    source,
  );
}
