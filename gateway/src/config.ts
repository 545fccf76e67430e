import { env, loadConfig, localDefault, serviceConfigShape } from "@pgw/kit/runtime";
import os from "node:os";
import { z } from "zod";
import { parseTrustedProxies } from "./auth/client-address";

/** TRUSTED_PROXIES: comma-separated addresses and CIDR ranges, parsed (empty: no proxy is trusted). */
const trustedProxies = z
  .string()
  .default("")
  .transform((list, ctx) => {
    try {
      return parseTrustedProxies(list);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: (err as Error).message });
      return z.NEVER;
    }
  });

/** The gateway's environment: ports, peers, secrets. */
export function loadGatewayConfig(source: NodeJS.ProcessEnv) {
  return loadConfig(
    {
      HTTP_PORT: env.port(8080),
      ADMIN_PORT: env.port(8081),
      HEALTH_PORT: env.port(9090),
      OPERATIONS_URL: env.url("http://127.0.0.1:50051"),
      ROUTING_URL: env.url("http://127.0.0.1:50052"),
      LEDGER_URL: env.url("http://127.0.0.1:50053"),
      RECEIPTS_URL: env.url("http://127.0.0.1:50054"),
      NOTIFIER_URL: env.url("http://127.0.0.1:50055"),
      NATS_URL: env.urls("nats://127.0.0.1:4222", ["nats:", "tls:"]),
      NATS_NAMESPACE: serviceConfigShape(0, 0).NATS_NAMESPACE,
      ADMIN_TOKEN: env.secret(source, "dev-admin-token"),
      API_KEY_HASH_SECRET: env.secret(source, "local-dev-api-key-hash-secret"),
      // The key receipts signs receipt links with: the gateway renews the links of evidence it keeps.
      RECEIPT_URL_SECRET: env.secret(source, "local-dev-receipt-url-secret"),
      API_KEY_CACHE_TTL_MS: env.int(30000),
      API_KEY_UNKNOWN_TTL_MS: env.int(10000),
      UNAUTHENTICATED_RATE_LIMIT_RPS: env.int(10, 1),
      TRUSTED_PROXIES: trustedProxies,
      ADMIN_SIGN_IN_FAILURES_PER_MINUTE: env.int(10, 1),
      UPSTREAM_TIMEOUT_MS: env.int(5000, 1),
      CREATE_TIMEOUT_MS: env.int(20000, 1),
      CANCEL_TIMEOUT_MS: env.int(8000, 1),
      // Required outside local mode: a loopback default would hand merchants links nobody can open.
      PAYMENT_PAGE_HOST: env.url(localDefault(source, "http://127.0.0.1:8080/pay")),
      LOG_LEVEL: env.logLevel(),
      LOCAL_MODE: env.bool(false),
      SHUTDOWN_GRACE_MS: env.int(10000),
      // Multipart uploads are spooled here, in a directory of each request's own (routes/confirm-payment.ts).
      TMPDIR: env.string(os.tmpdir()),
    },
    source,
  );
}

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
