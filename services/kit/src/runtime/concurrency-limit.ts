/**
 * At most `limit` tasks run at once, shared fairly between keys (tenants: shops). When a slot frees
 * it goes to the key with the fewest tasks running, and among those to the key served longest ago
 * (a key new to the queue first); a key's own tasks start in arrival order. So however many tasks
 * one key queues, another key's task waits for at most one slot to free, never behind that queue.
 * A task that throws frees its slot like one that succeeds.
 */
export function concurrencyLimit(limit: number): { run<T>(key: string, task: () => Promise<T>): Promise<T> } {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`concurrency limit must be a positive integer, got ${limit}`);
  let free = limit;
  /** Per key with tasks waiting or running: its waiting starts, tasks running, and when it was last served. */
  const keys = new Map<string, { waiting: (() => void)[]; running: number; servedAt: number }>();
  let turn = 0;

  const lane = (key: string) => {
    let entry = keys.get(key);
    if (!entry) keys.set(key, (entry = { waiting: [], running: 0, servedAt: -1 }));
    return entry;
  };
  const start = (entry: { running: number; servedAt: number }) => {
    entry.running++;
    entry.servedAt = turn++;
  };
  /** The waiting task whose key has the fewest running, then was served longest ago. */
  const next = () => {
    let best: { waiting: (() => void)[]; running: number; servedAt: number } | undefined;
    for (const entry of keys.values()) {
      if (entry.waiting.length === 0) continue;
      if (!best || entry.running < best.running || (entry.running === best.running && entry.servedAt < best.servedAt)) best = entry;
    }
    return best;
  };

  return {
    async run(key, task) {
      const entry = lane(key);
      if (free > 0) {
        // A free slot means nobody waits: slots pass straight to waiters.
        free--;
        start(entry);
      } else {
        await new Promise<void>((resolve) => entry.waiting.push(resolve));
      }
      try {
        return await task();
      } finally {
        entry.running--;
        // The slot passes straight to the chosen waiter, so a newcomer cannot overtake it.
        const chosen = next();
        if (chosen) {
          start(chosen);
          chosen.waiting.shift()!();
        } else free++;
        if (entry.running === 0 && entry.waiting.length === 0) keys.delete(key);
      }
    },
  };
}
