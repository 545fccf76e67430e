/**
 * An in-process cache of rows that change rarely, kept right by Postgres NOTIFY: whatever changes
 * them notifies a channel in the same transaction (for a table, best a statement-level trigger, so
 * every writer does, psql included), and each process reading through the cache drops all of it
 * when notified. It caches nothing until it listens, and drops everything when its listening
 * connection is lost and again once it listens anew (it may have missed notifications meanwhile).
 * A read that a change overtook is answered but not kept. It keeps at most `maxEntries` values
 * (default 10,000), dropping the least recently read first, since keys may come from callers. No
 * business rules.
 *
 * The entries are an lru-cache: concurrent reads of a key share one load (its `fetch`), and a
 * change clears or replaces entries, which aborts the loads in flight. With `ignoreFetchAbort` their
 * readers are still answered, while lru-cache stores a load only if it is still the key's entry.
 */
import { LRUCache } from "lru-cache";
import type { KitLog } from "../events/nats";
import { listenForNotify, type PgListener } from "./pg-listener";

export class NotifiedCache<K, V> {
  /** Values are boxed: lru-cache stores no null or undefined, and a value may be null ("no such row"). */
  private readonly entries: LRUCache<NonNullable<K>, { value: V }, () => Promise<V>>;
  private listening = false;

  constructor(maxEntries = 10_000) {
    this.entries = new LRUCache<NonNullable<K>, { value: V }, () => Promise<V>>({
      max: maxEntries,
      ignoreFetchAbort: true,
      fetchMethod: async (_key, _stale, { context: load }) => ({ value: await load() }),
    });
  }

  /** The value of `key`, loaded by `load` unless cached; readers of a key meanwhile share that load, so every `load` of a key must read the same. */
  async get(key: K, load: () => Promise<V>): Promise<V> {
    if (!this.listening) return load();
    // Never undefined: the fetch method always answers a box or throws.
    return (await this.entries.fetch(key as NonNullable<K>, { context: load }))!.value;
  }

  /** Keeps `value` for `key`, as a change made by this process stored it. */
  set(key: K, value: V): void {
    if (this.listening) this.entries.set(key as NonNullable<K>, { value });
  }

  /** Drops everything (a change here or elsewhere). */
  forget(): void {
    this.entries.clear();
  }

  /** Changes are heard from now on: keep what is loaded (dropping anything kept before). */
  startKeeping(): void {
    this.listening = true;
    this.forget();
  }

  /** Changes can no longer be heard: keep nothing until {@link startKeeping}. */
  stopKeeping(): void {
    this.listening = false;
    this.forget();
  }

  /**
   * Starts listening on `channel` of the database at `databaseUrl`; stop the listener at shutdown.
   * `onChange` runs after each drop that a notification, or listening anew, caused.
   */
  listen(databaseUrl: string, channel: string, log: KitLog, onChange?: () => void): PgListener {
    return listenForNotify(
      databaseUrl,
      channel,
      log,
      // Called once listening (anew) and at each notification: either way, drop and keep on.
      () => {
        this.startKeeping();
        onChange?.();
      },
      { onLost: () => this.stopKeeping() },
    );
  }
}
