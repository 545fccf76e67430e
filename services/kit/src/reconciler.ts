import { handleOnce, type ConsumerOptions } from "./consumer";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { createServiceClient } from "./clients";
import { scopedDurable } from "./nats";

/** A replayable record of published events (operations' ListStatusEvents). */
export type EventSource = (sinceIso: string, limit: number) => Promise<{ eventId: string; payload: Uint8Array; occurredAt: string }[]>;

export interface ReconcilerOptions<T> extends ConsumerOptions<T> {
  source: EventSource;
  /** How often to look (default 5 min). */
  everyMs?: number;
  /** How far back each pass looks (default 24 h). */
  lookbackMs?: number;
  /** Events younger than this are left to the live consumer (default 60 s). */
  settleMs?: number;
}

const PAGE = 500;

/**
 * Periodic reconciliation (DESIGN §3): replays the producer's record of events through the same
 * handler as the live consumer, under the same processed_events name, so an event JetStream lost
 * (or a consumer that was down past the stream's retention) is repaired and nothing runs twice.
 * Answers `stop` and `pass` (one pass now, resolving to how many events it repaired).
 */
export function startReconciler<T>(opts: ReconcilerOptions<T>) {
  const consumer = scopedDurable(opts.nc, opts.durable);
  const everyMs = opts.everyMs ?? 5 * 60_000;
  const lookbackMs = opts.lookbackMs ?? 24 * 60 * 60_000;
  const settleMs = opts.settleMs ?? 60_000;
  const txOptions = { maxWait: 5000, timeout: opts.transactionTimeoutMs ?? 15_000 };

  async function pass(): Promise<number> {
    const until = Date.now() - settleMs;
    let since = new Date(Date.now() - lookbackMs).toISOString();
    let repaired = 0;
    for (;;) {
      const page = await opts.source(since, PAGE);
      for (const record of page) {
        if (Date.parse(record.occurredAt) > until) return repaired;
        let event: T;
        try {
          event = opts.decode(record.payload);
        } catch (err) {
          opts.log.warn({ consumer, event_id: record.eventId, err }, "reconciliation: undecodable event skipped");
          continue;
        }
        if (opts.relevant && !opts.relevant(event)) continue;
        const meta = { eventId: record.eventId, subject: opts.filterSubject, redelivered: true };
        if (await handleOnce(opts.db, consumer, event, meta, opts.handle, txOptions)) {
          repaired++;
          opts.log.warn({ consumer, event_id: record.eventId }, "reconciliation: applied an event the consumer never saw");
        }
      }
      if (page.length < PAGE) return repaired;
      since = page[page.length - 1].occurredAt;
    }
  }

  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = pass().catch((err: unknown) => opts.log.warn({ consumer, err }, "reconciliation pass failed"));
  }, everyMs);
  timer.unref();
  return {
    pass,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** The event record of the operations service (ListStatusEvents) as an EventSource. */
export function operationsStatusEvents(operationsUrl: string): EventSource {
  const client = createServiceClient(OperationsService, operationsUrl, 30_000);
  return async (since, limit) => (await client.listStatusEvents({ since, limit })).events;
}
