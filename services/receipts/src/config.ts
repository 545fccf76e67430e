import { env, loadConfig } from "@pgw/kit/runtime";

/**
 * Environment of the receipts unit beyond what every service reads (the kit's serviceConfigShape):
 * - OPERATIONS_URL, ROUTING_URL: peers (gRPC).
 * - PUBLIC_BASE_URL: the gateway's public origin that receipt links point at; HTTPS outside
 *   LOCAL_MODE (dev default http://127.0.0.1:8080 only in LOCAL_MODE).
 * - RECEIPT_URL_SECRET: HMAC key of receipt links (dev default only in LOCAL_MODE).
 * - PDF_PARSE_TIMEOUT_MS: deadline of parsing one uploaded PDF.
 * - PDF_PARSE_CONCURRENCY: PDFs parsed at once (each in a process of its own); more wait, fairly
 *   between shops.
 * - PDF_PARSE_MAX_RSS_MB: resident memory at which a parsing process is killed.
 * - PDF_MAX_DECODED_MB: what a PDF's streams may decode to in all; more is not parsed.
 * - UPSTREAM_TIMEOUT_MS: deadline of each call to operations and routing.
 */
export function loadReceiptsConfig(source: NodeJS.ProcessEnv) {
  return loadConfig(
    {
      DATABASE_URL: env.databaseUrl(),
      OPERATIONS_URL: env.url("http://127.0.0.1:50051"),
      ROUTING_URL: env.url("http://127.0.0.1:50052"),
      PUBLIC_BASE_URL: env.publicBaseUrl(source),
      RECEIPT_URL_SECRET: env.secret(source, "local-dev-receipt-url-secret"),
      PDF_PARSE_TIMEOUT_MS: env.int(10_000, 100),
      PDF_PARSE_CONCURRENCY: env.int(2, 1),
      PDF_PARSE_MAX_RSS_MB: env.int(128, 64),
      PDF_MAX_DECODED_MB: env.int(32, 1),
      UPSTREAM_TIMEOUT_MS: env.int(5000, 1),
    },
    source,
  );
}

export type ReceiptsConfig = ReturnType<typeof loadReceiptsConfig>;
