import { Pool } from "undici";
import { percentile, type LoadResult } from "./load";

export interface OpenLoopOptions {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  /** A fixed body, or one made per request. */
  body?: string | (() => string);
  /** Arrivals per second, evenly spaced. */
  rate: number;
  durationS: number;
  /** Keep-alive connections at most (requests beyond wait for one, and that wait counts). */
  connections?: number;
}

/** Requests are sent in small batches: this often, each carrying what became due meanwhile. */
const TICK_MS = 2;

/**
 * An open-loop load at a constant arrival rate, as wrk2 or k6's constant-arrival-rate run it:
 * request i is due at start + i / rate whatever became of the earlier ones, and its latency counts
 * from that due time (so a stall of the system or of this generator shows in the figures instead of
 * silently lowering the rate). autocannon's `overallRate` is a different load: each connection
 * sends back to back until its per-second quota is spent, then waits for the next second, so
 * "1,000/s offered" arrives as a burst of 32 closed-loop connections for part of each second; and
 * its coordinated-omission correction assumes 1 ms between a connection's requests, adding a
 * made-up sample per millisecond of every slow answer.
 */
export async function openLoop(name: string, opts: OpenLoopOptions): Promise<LoadResult> {
  const url = new URL(opts.url);
  const pool = new Pool(url.origin, { connections: opts.connections ?? 64 });
  const total = Math.round(opts.rate * opts.durationS);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const inFlight = new Set<Promise<void>>();

  const send = (dueAt: number) => {
    const body = typeof opts.body === "function" ? opts.body() : opts.body;
    const done = pool
      .request({ path: url.pathname, method: opts.method ?? "GET", headers: opts.headers, body })
      .then(async (res) => {
        await res.body.dump();
        latencies.push(performance.now() - dueAt);
        if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
      })
      .catch(() => void errors++);
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };

  const started = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * opts.rate) + 1);
    for (; sent < due; sent++) send(started + (sent * 1000) / opts.rate);
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  await Promise.all(inFlight);
  const elapsedS = (performance.now() - started) / 1000;
  await pool.close();
  return {
    name,
    rps: Math.round(latencies.length / elapsedS),
    p50: Math.round(percentile(latencies, 50)),
    p99: Math.round(percentile(latencies, 99)),
    non2xx,
    errors,
  };
}
