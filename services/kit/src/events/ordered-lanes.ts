/**
 * Runs tasks with bounded concurrency while tasks that share a key run one after another, in the
 * order they were handed in (per-key FIFO lanes). `run` resolves once the task has been started, or
 * queued behind its key, and waits while `limit` tasks are unfinished, so a caller feeding it in a
 * loop is held back instead of buffering without bound. Tasks must not throw.
 */
export class OrderedLanes {
  private readonly unfinished = new Set<Promise<void>>();
  private readonly tails = new Map<string, Promise<void>>();

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`OrderedLanes limit must be a positive integer, got ${limit}`);
  }

  async run(key: string, task: () => Promise<void>): Promise<void> {
    while (this.unfinished.size >= this.limit) await Promise.race(this.unfinished);
    const previous = this.tails.get(key);
    const current = previous ? previous.then(task) : task();
    this.tails.set(key, current);
    this.unfinished.add(current);
    void current.finally(() => {
      this.unfinished.delete(current);
      if (this.tails.get(key) === current) this.tails.delete(key);
    });
  }

  /** Resolves once every task handed in so far has finished. */
  async drained(): Promise<void> {
    await Promise.all([...this.unfinished]);
  }
}
