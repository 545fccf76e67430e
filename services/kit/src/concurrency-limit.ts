/**
 * At most `limit` tasks run at once; the others wait in arrival order. A task that throws frees
 * its slot like one that succeeds.
 */
export function concurrencyLimit(limit: number): { run<T>(task: () => Promise<T>): Promise<T> } {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`concurrency limit must be a positive integer, got ${limit}`);
  let free = limit;
  const waiting: (() => void)[] = [];
  return {
    async run(task) {
      if (free > 0) free--;
      else await new Promise<void>((r) => waiting.push(r));
      try {
        return await task();
      } finally {
        // The slot passes straight to the next in line, so a newcomer cannot overtake it.
        const next = waiting.shift();
        if (next) next();
        else free++;
      }
    },
  };
}
