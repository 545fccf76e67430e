import { LRUCache } from "lru-cache";

/** Who a resolved API key is: the only source of scope for a /v1 request. */
export interface Principal {
  apiKeyId: string;
  merchantId: string;
  shopId: string;
  rateLimitRps: number;
}

/** Where a key not cached, or due for a refresh, is looked up: operations, in the gateway. */
export interface KeySource {
  /** Who the key is; undefined when there is no such key (any more); throws when that cannot be told. */
  resolve(keyHash: string): Promise<Principal | undefined>;
  /** A background refresh failed: the entry is kept until its TTL and refreshed again later. */
  refreshFailed(keyHash: string, err: unknown): void;
}

export interface KeyCacheOptions {
  /** At most this many keys (default 100,000); past it the least recently used one goes. */
  maxEntries?: number;
  /** The clock, in ms, for expiry and refresh alike (tests move it). lru-cache reads 0 as "never expires". */
  now?: () => number;
}

/** A cached key: its principal, and from when the next request starts a background refresh. */
interface Entry {
  principal: Principal;
  refreshAt: number;
}

/**
 * The fetch's way of saying "no such key". An empty answer would not do: over an entry being
 * refreshed lru-cache puts the old entry back, and to the callers of a fetch aborted meanwhile it
 * gives the abort's error. A rejection drops a first resolve, leaves a refresh to {@link KeyCache}
 * and reaches every waiting caller as it is.
 */
class NoSuchKey extends Error {}

/**
 * Short-lived cache of resolved keys by key hash, on lru-cache. Revocation events evict entries at
 * once; the TTL bounds how long a missed event could keep a revoked key alive.
 *
 * - Requests arriving while a key is being resolved wait for that one call: lru-cache's `fetch`
 *   shares a load in flight.
 * - An entry past half its TTL is due for a refresh: the first caller to see that still uses it
 *   and resolves the key again in the background (`fetch` with `forceRefresh`; the entry is served
 *   meanwhile), so a key in steady use never expires and its requests never wait for operations.
 *   (At 1,000 reads/s an expiry held every request for 30–100 ms while dozens of them resolved the
 *   key at once.) A refresh that fails leaves the entry as it was (`noDeleteOnFetchRejection`), to
 *   expire at its own TTL; the next refresh is due a tenth of the TTL later.
 * - Evicting a key while it is being resolved (a revocation, a reconnect) deletes its entry, and
 *   lru-cache then aborts that fetch: with `ignoreFetchAbort` the requests already waiting still get
 *   its answer, but it is not stored, since lru-cache stores a result only while its fetch is still
 *   the key's entry. So an answer that a revocation overtook cannot put the revoked key back.
 */
export class KeyCache {
  private readonly keys: LRUCache<string, Entry, KeySource>;
  /**
   * Keys being fetched, with how many callers wait on each: lru-cache's `keys()` skips an entry
   * whose fetch is in flight (a first resolve, or a refresh), and {@link evictWhere} must reach it.
   */
  private readonly fetching = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(ttlMs: number, { maxEntries = 100_000, now = () => performance.now() }: KeyCacheOptions = {}) {
    // lru-cache reads a TTL of 0 as "never expires"; a 1 ms one keeps nothing worth the name.
    this.ttlMs = Math.max(1, ttlMs);
    this.now = now;
    this.keys = new LRUCache<string, Entry, KeySource>({
      max: maxEntries,
      ttl: this.ttlMs,
      // Read the clock at every check: by default lru-cache keeps one reading for 1 ms.
      ttlResolution: 0,
      perf: { now },
      ignoreFetchAbort: true,
      fetchMethod: async (keyHash, _stale, { context: source }) => {
        const principal = await source.resolve(keyHash);
        if (!principal) throw new NoSuchKey();
        return { principal, refreshAt: this.now() + this.ttlMs / 2 };
      },
    });
  }

  /** The principal of a cached key; past half the TTL the first caller also starts its background refresh. */
  get(keyHash: string, source: KeySource): Principal | undefined {
    const entry = this.keys.get(keyHash);
    if (entry && entry.refreshAt <= this.now()) {
      // The refresh is this caller's; should it fail (operations unreachable), the next is due a tenth of the TTL later.
      entry.refreshAt = this.now() + this.ttlMs / 10;
      void this.refresh(keyHash, source);
    }
    return entry?.principal;
  }

  /** The key's principal, from the cache or else resolved (one call for all the callers of a moment); undefined when there is no such key. */
  async fetch(keyHash: string, source: KeySource): Promise<Principal | undefined> {
    try {
      return (await this.whileFetching(keyHash, () => this.keys.fetch(keyHash, { context: source })))?.principal;
    } catch (err) {
      if (err instanceof NoSuchKey) return undefined;
      throw err;
    }
  }

  /** Whether a resolve of the key is in flight (a first one, or a background refresh). */
  resolving(keyHash: string): boolean {
    return this.fetching.has(keyHash);
  }

  /** Whether the key is cached and unexpired (a first resolve in flight does not count). */
  has(keyHash: string): boolean {
    return this.keys.has(keyHash);
  }

  /** Evicts a revoked key, found by its hash or its id. */
  evict(keyHash: string, apiKeyId?: string): void {
    this.keys.delete(keyHash);
    if (apiKeyId) this.evictWhere((principal) => principal.apiKeyId === apiKeyId);
  }

  /**
   * Evicts every key whose principal matches, e.g. the keys of a shop whose settings just changed,
   * and every key whose first resolve is in flight (its principal is not known yet).
   */
  evictWhere(match: (principal: Principal) => boolean): void {
    for (const keyHash of [...this.keys.keys(), ...this.fetching.keys()]) {
      const entry = this.keys.peek(keyHash, { allowStale: true });
      if (!entry || match(entry.principal)) this.keys.delete(keyHash);
    }
  }

  /** Evicts every key (events may have been missed). */
  clear(): void {
    this.keys.clear();
  }

  private async refresh(keyHash: string, source: KeySource): Promise<void> {
    try {
      await this.whileFetching(keyHash, () => this.keys.fetch(keyHash, { forceRefresh: true, noDeleteOnFetchRejection: true, context: source }));
    } catch (err) {
      if (err instanceof NoSuchKey) this.keys.delete(keyHash);
      // A failure is worth telling only while the key is still cached; once evicted (revoked) there is nothing to refresh.
      else if (this.keys.peek(keyHash, { allowStale: true })) source.refreshFailed(keyHash, err);
    }
  }

  /** Runs a fetch of `keyHash`, counted in {@link fetching} until its result is stored or dropped. */
  private async whileFetching<T>(keyHash: string, fetch: () => Promise<T>): Promise<T> {
    this.fetching.set(keyHash, (this.fetching.get(keyHash) ?? 0) + 1);
    try {
      return await fetch();
    } finally {
      const waiting = this.fetching.get(keyHash)! - 1;
      if (waiting > 0) this.fetching.set(keyHash, waiting);
      else this.fetching.delete(keyHash);
    }
  }
}
