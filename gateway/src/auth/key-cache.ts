/** Who a resolved API key is: the only source of scope for a /v1 request. */
export interface Principal {
  apiKeyId: string;
  merchantId: string;
  shopId: string;
  rateLimitRps: number;
}

/** A cached key: its principal, and whether it is old enough to be resolved again in the background. */
export interface CachedKey {
  principal: Principal;
  refreshDue: boolean;
}

/**
 * Short-lived cache of resolved keys by key hash. Revocation events evict entries at once; the TTL
 * bounds how long a missed event could keep a revoked key alive.
 *
 * An entry past half its TTL is due for a refresh: the first caller to see that still uses it and
 * resolves the key again in the background, so a key in steady use never expires and its requests
 * never wait for operations. (At 1,000 reads/s an expiry held every request for 30–100 ms while
 * dozens of them resolved the key at once.)
 */
export class KeyCache {
  private readonly entries = new Map<string, { principal: Principal; refreshAt: number; expiresAt: number }>();
  private evictions = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(keyHash: string): CachedKey | undefined {
    const entry = this.entries.get(keyHash);
    if (!entry) return undefined;
    const now = this.now();
    if (entry.expiresAt <= now) {
      this.entries.delete(keyHash);
      return undefined;
    }
    if (entry.refreshAt > now) return { principal: entry.principal, refreshDue: false };
    // The refresh is this caller's; if it fails (operations unreachable), the next is due a tenth of the TTL later.
    entry.refreshAt = now + this.ttlMs / 10;
    return { principal: entry.principal, refreshDue: true };
  }

  /** Whether the key has an entry, expired or not; unlike {@link get}, claims no refresh. */
  has(keyHash: string): boolean {
    return this.entries.has(keyHash);
  }

  /**
   * Changes with every eviction. A resolve passes the value it read before asking operations to
   * {@link set}, so an answer read before a revocation cannot put the revoked key back.
   */
  get generation(): number {
    return this.evictions;
  }

  /** Caches a resolved key, unless something was evicted since `generation` was read. */
  set(keyHash: string, principal: Principal, generation: number): void {
    if (this.ttlMs <= 0 || generation !== this.evictions) return;
    this.entries.delete(keyHash);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    const now = this.now();
    this.entries.set(keyHash, { principal, refreshAt: now + this.ttlMs / 2, expiresAt: now + this.ttlMs });
  }

  /** Evicts a revoked key, found by its hash or its id. */
  evict(keyHash: string, apiKeyId?: string): void {
    this.evictions++;
    this.entries.delete(keyHash);
    if (apiKeyId) this.evictWhere((principal) => principal.apiKeyId === apiKeyId);
  }

  /** Evicts every key whose principal matches, e.g. the keys of a shop whose settings just changed. */
  evictWhere(match: (principal: Principal) => boolean): void {
    this.evictions++;
    for (const [hash, entry] of this.entries) if (match(entry.principal)) this.entries.delete(hash);
  }

  clear(): void {
    this.evictions++;
    this.entries.clear();
  }
}
