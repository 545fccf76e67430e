import { Gauge, type Registry } from "prom-client";

/** How long a scrape waits for one of its reads; a read that fails or is late leaves the gauge's last value. */
export const SCRAPE_READ_MS = 2000;

/** `read`'s result, or undefined when it fails or takes longer than SCRAPE_READ_MS: a scrape never hangs on a dependency. */
export async function readForScrape<T>(read: PromiseLike<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), SCRAPE_READ_MS)));
  try {
    return await Promise.race([Promise.resolve(read).catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A gauge whose value `read` answers when Prometheus scrapes (a cheap, indexed count): its cost is
 * one read per scrape, whatever the traffic.
 */
export function scrapedGauge(registry: Registry, name: string, help: string, read: () => Promise<number>): void {
  scrapedGauges(registry, read, [{ name, help, value: (v) => v }]);
}

/**
 * `read` (within SCRAPE_READ_MS, as readForScrape), shared by every call made while one is in
 * flight: several gauges filled from one read each collect through it, and a scrape collects them
 * all at once, so the read runs once per scrape.
 */
export function sharedScrapeRead<T>(read: () => PromiseLike<T>): () => Promise<T | undefined> {
  let inFlight: Promise<T | undefined> | undefined;
  return () => (inFlight ??= readForScrape(read()).finally(() => (inFlight = undefined)));
}

/**
 * Gauges filled from one `read` when Prometheus scrapes (one read per scrape, sharedScrapeRead):
 * each takes its value from the result with its `value`.
 */
export function scrapedGauges<T>(registry: Registry, read: () => PromiseLike<T>, gauges: { name: string; help: string; value: (result: T) => number }[]): void {
  const shared = sharedScrapeRead(read);
  for (const { name, help, value } of gauges) {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const result = await shared();
        if (result !== undefined) this.set(value(result));
      },
    });
  }
}
