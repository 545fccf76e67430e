/**
 * The event plumbing's Prometheus metrics (outbox, JetStream consumers, reconciliation), on the
 * unit's registry. runService attaches them to the unit's NATS connection; the relay, consumers and
 * reconcilers of that connection find them there ({@link eventMetricsOf}), so no option of theirs
 * has to carry them. Gauges are read when Prometheus scrapes: one indexed query of the outbox and
 * one consumer-info request per durable of the unit, each given SCRAPE_READ_MS (runtime/scraped-gauge.ts).
 */
import { sql } from "kysely";
import type { ConsumerInfo, JetStreamManager, NatsConnection } from "nats";
import { Counter, Gauge, type Registry } from "prom-client";
import { kitTables } from "../db/kit-tables";
import type { PgDb } from "../db/pg-db";
import { STREAM_NAME } from "./nats";
import { readForScrape, scrapedGauges, sharedScrapeRead } from "../runtime/scraped-gauge";

/** What the relay, consumers and reconcilers of one unit count. */
export interface EventMetrics {
  /** Events the relay published and JetStream acknowledged. */
  published: Counter;
  /** Events the relay tried to publish and JetStream did not acknowledge (they are retried). */
  publishFailures: Counter;
  /**
   * Deliveries the unit's consumers settled, by `consumer` (the durable's name without namespace)
   * and `outcome`: handled, duplicate (processed before), skipped (not relevant to it), deferred
   * (waits for an earlier event; redelivered shortly), failed (redelivered later), refused
   * (undecodable or without an event id; terminated).
   */
  deliveries: Counter<"consumer" | "outcome">;
  /** Reconciliation passes by `consumer` and `result` (ok, failed). */
  reconciliationPasses: Counter<"consumer" | "result">;
  /** Events a reconciliation pass applied because the live consumer never had (by `consumer`). */
  eventsAppliedLate: Counter<"consumer">;
  /** The unit's durable consumers: their name without the namespace (the label) → the durable's name on the server. */
  durables: Map<string, string>;
}

const attached = new WeakMap<NatsConnection, EventMetrics>();

/** The event metrics of the unit that owns `nc`, if it attached any. */
export const eventMetricsOf = (nc: NatsConnection): EventMetrics | undefined => attached.get(nc);

/** Registers the event metrics of the unit whose database is `db` and NATS connection `nc`. */
export function attachEventMetrics(nc: NatsConnection, db: PgDb<any>, registry: Registry): EventMetrics {
  const metrics: EventMetrics = {
    published: new Counter({ name: "outbox_events_published_total", help: "Outbox events published and acknowledged by JetStream", registers: [registry] }),
    deliveries: new Counter({ name: "events_consumed_total", help: "Event deliveries the unit's durable consumers settled, by consumer and outcome", labelNames: ["consumer", "outcome"], registers: [registry] }),
    publishFailures: new Counter({ name: "outbox_publish_failures_total", help: "Outbox events JetStream did not acknowledge when published (retried)", registers: [registry] }),
    reconciliationPasses: new Counter({ name: "reconciliation_passes_total", help: "Reconciliation passes, by consumer and result", labelNames: ["consumer", "result"], registers: [registry] }),
    eventsAppliedLate: new Counter({ name: "reconciliation_events_applied_total", help: "Events a reconciliation pass applied that the live consumer never saw", labelNames: ["consumer"], registers: [registry] }),
    durables: new Map(),
  };
  attached.set(nc, metrics);
  registerOutboxGauges(db, registry);
  registerConsumerGauges(nc, metrics.durables, registry);
  return metrics;
}

function registerOutboxGauges(db: PgDb<any>, registry: Registry): void {
  // The partial index on unpublished rows answers both from the rows that wait, however large the table.
  const read = () =>
    kitTables(db)
      .selectFrom("outbox")
      .select([sql<string>`count(*)`.as("waiting"), sql<number | null>`extract(epoch from clock_timestamp() - min(created_at))::float8`.as("oldest")])
      .where("publishedAt", "is", null)
      .executeTakeFirstOrThrow();
  scrapedGauges(registry, read, [
    { name: "outbox_pending_events", help: "Outbox rows committed and not yet published", value: (row) => Number(row.waiting) },
    { name: "outbox_oldest_pending_age_seconds", help: "Age of the oldest unpublished outbox row (0 when none waits)", value: (row) => Math.max(0, row.oldest ?? 0) },
  ]);
}

/** The JetStream figures of each durable of the unit that gauges show, by gauge name. */
const CONSUMER_GAUGES = [
  ["jetstream_consumer_pending_messages", "Messages of the stream not yet delivered to the durable consumer", "num_pending"],
  ["jetstream_consumer_ack_pending_messages", "Messages delivered to the durable consumer and not yet acknowledged", "num_ack_pending"],
  ["jetstream_consumer_redelivered_messages", "Messages the durable consumer has had delivered more than once and not yet acknowledged", "num_redelivered"],
] as const;

function registerConsumerGauges(nc: NatsConnection, durables: Map<string, string>, registry: Registry): void {
  let jsm: Promise<JetStreamManager> | undefined;
  const read = sharedScrapeRead(async () => {
    if (durables.size === 0 || nc.isClosed()) return undefined;
    jsm ??= nc.jetstreamManager();
    const manager = await readForScrape(jsm);
    if (!manager) return void (jsm = undefined);
    const infos = await Promise.all([...durables].map(async ([consumer, durable]) => ({ consumer, info: await readForScrape(manager.consumers.info(STREAM_NAME, durable)) })));
    return infos.filter((i) => i.info !== undefined) as { consumer: string; info: ConsumerInfo }[];
  });
  for (const [name, help, field] of CONSUMER_GAUGES) {
    new Gauge({
      name,
      help,
      labelNames: ["consumer"],
      registers: [registry],
      async collect() {
        for (const { consumer, info } of (await read()) ?? []) this.set({ consumer }, info[field]);
      },
    });
  }
}
