import { createClient } from "@connectrpc/connect";
import { sql } from "kysely";
import type { Registry } from "prom-client";
import { handleOnce, type ConsumerOptions } from "./consumer";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { GrpcTls } from "../rpc/grpc-tls";
import { kitTables } from "../db/kit-tables";
import { eventMetricsOf } from "./event-metrics";
import { scopedDurable } from "./nats";
import { createPeerTransport } from "../rpc/peer-transport";
import { runPeriodically } from "../runtime/periodic";

/** A replayable record of published events (operations' ListStatusEvents). */
export type EventSource = (sinceIso: string, limit: number) => Promise<{ eventId: string; payload: Uint8Array; occurredAt: string }[]>;

export interface ReconcilerOptions<T, P = undefined> extends ConsumerOptions<T, P> {
  source: EventSource;
  /** How often to look (default 5 min). */
  everyMs?: number;
  /**
   * How far back the first pass of a process looks (default 24 h). Later passes start where the
   * last complete pass stopped checking (less `settleMs`), not this far back again.
   */
  lookbackMs?: number;
  /** Events younger than this are left to the live consumer (default 60 s). */
  settleMs?: number;
}

const PAGE = 500;

/**
 * Periodic reconciliation (docs/architecture.md, Reconciliation): replays the producer's record of
 * events through the same handler as the live consumer, under the same processed_events name, so an
 * event JetStream lost (or a consumer that was down past the stream's retention) is repaired and
 * nothing runs twice. Each event is checked once it has settled: a process's first pass looks back
 * `lookbackMs`, each later one starts where the last complete pass stopped (overlapping it by
 * `settleMs`), so a pass reads what happened since the last one rather than the whole lookback
 * every time. A pass that fails leaves that point where it was. Answers `stop` and `pass` (one pass
 * now, resolving to how many events it repaired).
 */
export function startReconciler<T, P = undefined>(opts: ReconcilerOptions<T, P>) {
  const consumer = scopedDurable(opts.nc, opts.processedAs ?? opts.durable);
  const metrics = eventMetricsOf(opts.nc);
  // Labelled without the namespace: one name per consumer whatever the deployment.
  const label = { consumer: opts.processedAs ?? opts.durable };
  const everyMs = opts.everyMs ?? 5 * 60_000;
  const lookbackMs = opts.lookbackMs ?? 24 * 60 * 60_000;
  const settleMs = opts.settleMs ?? 60_000;
  const txOptions = { maxWait: 5000, timeout: opts.transactionTimeoutMs ?? 15_000 };

  async function processedAmong(eventIds: string[]): Promise<Set<string>> {
    if (eventIds.length === 0) return new Set();
    // `= ANY` of one array parameter, not IN (…): the same statement text whatever the page's size.
    const rows = await kitTables(opts.db)
      .selectFrom("processedEvents")
      .select("eventId")
      .where("consumer", "=", consumer)
      .where("eventId", "=", sql<string>`ANY(${eventIds}::uuid[])`)
      .execute();
    return new Set(rows.map((r) => r.eventId));
  }

  /** Everything that occurred up to here was checked by a complete pass (ms since the epoch). */
  let checkedUntil = -Infinity;

  async function pass(): Promise<number> {
    const until = Date.now() - settleMs;
    let since = new Date(Math.max(Date.now() - lookbackMs, checkedUntil - settleMs)).toISOString();
    let repaired = 0;
    for (;;) {
      const page = await opts.source(since, PAGE);
      const settled = page.filter((record) => Date.parse(record.occurredAt) <= until);
      const candidates: { eventId: string; event: T; occurredAt: string }[] = [];
      for (const record of settled) {
        try {
          const event = opts.decode(record.payload);
          if (!opts.relevant || opts.relevant(event)) candidates.push({ eventId: record.eventId, event, occurredAt: record.occurredAt });
        } catch (err) {
          opts.log.warn({ consumer, event_id: record.eventId, err }, "reconciliation: undecodable event skipped");
        }
      }
      // One read per page for what the live consumer already handled (nearly everything), so a pass
      // costs a query per page rather than a transaction per event; handleOnce still decides.
      const handled = await processedAmong(candidates.map((c) => c.eventId));
      for (const { eventId, event, occurredAt } of candidates) {
        if (handled.has(eventId)) continue;
        const meta = { eventId, subject: opts.filterSubject, redelivered: true, storedAt: new Date(occurredAt) };
        if (await handleOnce(opts.db, consumer, event, meta, opts, txOptions)) {
          repaired++;
          metrics?.eventsAppliedLate.inc(label);
          opts.log.warn({ consumer, event_id: eventId }, "reconciliation: applied an event the consumer never saw");
        }
      }
      if (settled.length < page.length || page.length < PAGE) {
        checkedUntil = until;
        return repaired;
      }
      // The source pages by `occurredAt > since` in milliseconds: step back one so events sharing the
      // page's last millisecond are not skipped (those already seen are filtered above), unless a
      // whole page shares it (then stepping back would read the same page again).
      const last = Date.parse(page[page.length - 1].occurredAt);
      since = new Date(Date.parse(page[0].occurredAt) < last ? last - 1 : last).toISOString();
    }
  }

  const counted = async () => {
    try {
      const repaired = await pass();
      metrics?.reconciliationPasses.inc({ ...label, result: "ok" });
      return repaired;
    } catch (err) {
      metrics?.reconciliationPasses.inc({ ...label, result: "failed" });
      throw err;
    }
  };
  return runPeriodically(counted, everyMs, (err) => opts.log.warn({ consumer, err }, "reconciliation pass failed"));
}

/** The event record of the operations service (ListStatusEvents) as an EventSource, its calls timed in `registry` (the unit's). */
export function operationsStatusEvents(operationsUrl: string, tls: GrpcTls | null, registry?: Registry): EventSource {
  const client = createClient(OperationsService, createPeerTransport(operationsUrl, { timeoutMs: 30_000, tls, registry }));
  return async (since, limit) => (await client.listStatusEvents({ since, limit })).events;
}
