/**
 * Concurrent requests for the same key share one run of the work: the first starts it, the others
 * get its result (or its error). Once it has settled, the next request runs the work again.
 */
export class SingleFlight<V> {
  private readonly running = new Map<string, Promise<V>>();

  run(key: string, work: () => Promise<V>): Promise<V> {
    const current = this.running.get(key);
    if (current) return current;
    const started = (async () => work())().finally(() => this.running.delete(key));
    this.running.set(key, started);
    return started;
  }
}
