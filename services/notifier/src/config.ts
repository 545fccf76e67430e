import { ConfigError, env, loadConfig } from "@pgw/kit/runtime";
import { parseRetrySchedule, STANDARD_RETRY_SCHEDULE_MS } from "./domain/retry-schedule";

/** Environment of the notifier beyond what every service reads (see the kit's serviceConfigShape). */
export function loadNotifierConfig(source: NodeJS.ProcessEnv) {
  const config = loadConfig(
    {
      DATABASE_URL: env.databaseUrl(),
      /** Receipts service (evidence of completed operations for the webhook body, when the status event carries no provider legs). */
      RECEIPTS_URL: env.url("http://127.0.0.1:50054"),
      /** Operations: a webhook's `number` when its status event carries none this unit can open, and its record of status events, replayed by the periodic reconciliation. */
      OPERATIONS_URL: env.url("http://127.0.0.1:50051"),
      /** Deadline of the evidence call; on failure the body says receipt_evidence_status `unavailable`. */
      EVIDENCE_TIMEOUT_MS: env.int(2000, 1),
      /** HMAC key of receipt links (receipts' and the gateway's): each attempt renews the links in its body. Dev default only in LOCAL_MODE. */
      RECEIPT_URL_SECRET: env.secret(source, "local-dev-receipt-url-secret"),
      /** The gateway's public origin (as receipts has it): links of evidence built from the legs a status event carries point at it. */
      PUBLIC_BASE_URL: env.publicBaseUrl(source),
      /** Deadline of one webhook POST (answer within it or the attempt failed). */
      WEBHOOK_TIMEOUT_MS: env.int(10000, 1),
      /**
       * Retry schedule: comma-separated delays in ms before each attempt (the first is immediate
       * whatever its value); its length is the number of attempts. Default: Standard Webhooks.
       */
      WEBHOOK_RETRY_SCHEDULE_MS: env.string().optional(),
      /** Attempts in flight per notifier process, and per shop within it (2 while a shop's endpoint struggles). */
      WEBHOOK_CONCURRENCY: env.int(128, 1),
      WEBHOOK_PER_SHOP_CONCURRENCY: env.int(16, 1),
      /** How often workers look for due deliveries besides being woken. */
      WEBHOOK_POLL_MS: env.int(1000, 10),
      /** While deliveries keep coming, how long a wake-up waits so they share one claim (0: never). */
      WEBHOOK_CLAIM_GATHER_MS: env.int(20, 0),
      /**
       * Status events handled at once per process by each status consumer (one operation's events still one after another,
       * in order): building a completed operation's body waits for receipts, so one at a time
       * would cap throughput.
       */
      NOTIFIER_STATUS_CONCURRENCY: env.int(16, 1),
    },
    source,
  );
  let schedule: readonly number[] = STANDARD_RETRY_SCHEDULE_MS;
  if (config.WEBHOOK_RETRY_SCHEDULE_MS) {
    try {
      schedule = parseRetrySchedule(config.WEBHOOK_RETRY_SCHEDULE_MS);
    } catch (err) {
      throw new ConfigError("WEBHOOK_RETRY_SCHEDULE_MS", `${(err as Error).message} (got ${JSON.stringify(config.WEBHOOK_RETRY_SCHEDULE_MS)})`);
    }
  }
  return { ...config, retrySchedule: schedule };
}

export type NotifierConfig = ReturnType<typeof loadNotifierConfig>;
