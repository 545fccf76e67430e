/**
 * An in-process cache of rows that change rarely, kept right by Postgres NOTIFY: whatever changes
 * them notifies a channel in the same transaction (for a table, best a statement-level trigger, so
 * every writer does, psql included), and each process reading through the cache drops all of it
 * when notified. It caches nothing until it listens, and drops everything when its listening
 * connection is lost and again once it listens anew (it may have missed notifications meanwhile).
 * A read that a change overtook is answered but not kept. It keeps at most `maxEntries` values
 * (default 10,000), dropping the oldest first, since keys may come from callers. No business rules.
 */
import type { KitLog } from "./nats";
import { listenForNotify, type PgListener } from "./pg-listener";

export class NotifiedCache<K, V> {
  private readonly entries = new Map<K, V>();
  /** Bumped by every change: a load started before one is not kept. */
  private generation = 0;
  private listening = false;

  constructor(private readonly maxEntries = 10_000) {}

  /** The value of `key`, loaded by `load` unless cached. */
  async get(key: K, load: () => Promise<V>): Promise<V> {
    if (this.entries.has(key)) return this.entries.get(key) as V;
    const generation = this.generation;
    const value = await load();
    if (this.listening && generation === this.generation) this.keep(key, value);
    return value;
  }

  /** Keeps `value` for `key`, as a change made by this process stored it. */
  set(key: K, value: V): void {
    this.generation++;
    if (this.listening) this.keep(key, value);
  }

  private keep(key: K, value: V): void {
    this.entries.delete(key); // re-inserted last: the newest
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, value);
  }

  /** Drops everything (a change here or elsewhere). */
  forget(): void {
    this.generation++;
    this.entries.clear();
  }

  /** Starts listening on `channel` of the database at `databaseUrl`; stop the listener at shutdown. */
  listen(databaseUrl: string, channel: string, log: KitLog): PgListener {
    return listenForNotify(
      databaseUrl,
      channel,
      log,
      () => {
        this.listening = true;
        this.forget();
      },
      {
        onLost: () => {
          this.listening = false;
          this.forget();
        },
      },
    );
  }
}
