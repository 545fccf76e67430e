/** Prometheus metrics of webhook delivery, on the unit's registry (served on the health port). */
import { scrapedGauges } from "@pgw/kit/runtime";
import { Counter, Histogram, type Registry } from "prom-client";
import { pendingDeliveries, type NotifierDb } from "../store";

export interface DeliveryMetrics {
  /** Deliveries settled, by outcome: delivered, failed (schedule exhausted), disabled (410 Gone). */
  deliveries: Counter<"outcome">;
  /** Attempts, by result: success, http_error, no_response (network, timeout, refused destination), gone. */
  attempts: Counter<"result">;
  /** Duration of one HTTP attempt. */
  attemptSeconds: Histogram;
  /** From the delivery's creation (the status change) to the merchant's 2xx. */
  deliveryLatencySeconds: Histogram;
}

export function deliveryMetrics(registry: Registry): DeliveryMetrics {
  return {
    deliveries: new Counter({ name: "notifier_webhook_deliveries_total", help: "Webhook deliveries settled, by outcome", labelNames: ["outcome"], registers: [registry] }),
    attempts: new Counter({ name: "notifier_webhook_attempts_total", help: "Webhook delivery attempts, by result", labelNames: ["result"], registers: [registry] }),
    attemptSeconds: new Histogram({
      name: "notifier_webhook_attempt_duration_seconds",
      help: "Duration of one webhook HTTP attempt",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    deliveryLatencySeconds: new Histogram({
      name: "notifier_webhook_delivery_latency_seconds",
      help: "Time from a webhook's creation to its successful delivery",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300, 3600, 86400],
      registers: [registry],
    }),
  };
}

/** Registers the webhook backlog gauges, read from `db` at each scrape: deliveries pending and the age of the oldest. */
export function registerDeliveryBacklog(registry: Registry, db: NotifierDb): void {
  scrapedGauges(registry, () => pendingDeliveries(db), [
    { name: "notifier_webhook_backlog", help: "Webhook deliveries pending (due now or waiting for a retry)", value: (b) => b.count },
    { name: "notifier_webhook_oldest_pending_age_seconds", help: "Age of the oldest pending webhook delivery (0 when none is pending)", value: (b) => b.oldestAgeSeconds },
  ]);
}
