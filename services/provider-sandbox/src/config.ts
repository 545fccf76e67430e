import { env, loadConfig } from "@pgw/kit/runtime";

/**
 * Environment of the sandbox; every variable has a default but DATABASE_URL (README.md,
 * Configuration).
 */
const configShape = {
  DATABASE_URL: env.databaseUrl(),
  HTTP_PORT: env.port(8090),
  LOG_LEVEL: env.logLevel(),
  /** Key of the X-Sandbox-Signature HMAC on callbacks. */
  CALLBACK_SECRET: env.string("sandbox-callback-secret"),
  CALLBACK_TIMEOUT_MS: env.int(5000, 1),
  /** First retry delay of a failed callback; 5 attempts in all, doubling: about 30 s by default. */
  CALLBACK_RETRY_BASE_MS: env.int(2000, 1),
  CALLBACK_ATTEMPTS: env.int(5, 1),
  /** How often lapsed requisites are looked for. */
  EXPIRY_POLL_MS: env.int(1000, 10),
  /** How long a create is held under an `accept: "timeout"` scenario. */
  TIMEOUT_HOLD_MS: env.int(60_000, 1),
};

/** The sandbox's configuration from `source`; a missing or malformed variable stops it. */
export function loadSandboxConfig(source: NodeJS.ProcessEnv) {
  return loadConfig(configShape, source);
}

export type SandboxConfig = ReturnType<typeof loadSandboxConfig>;
