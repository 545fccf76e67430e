/** Who a resolved API key is: the only source of scope for a /v1 request. */
export interface Principal {
  apiKeyId: string;
  merchantId: string;
  shopId: string;
  rateLimitRps: number;
}

/**
 * Short-lived cache of resolved keys by key hash. Revocation events evict entries at once; the TTL
 * bounds how long a missed event could keep a revoked key alive.
 */
export class KeyCache {
  private readonly entries = new Map<string, { principal: Principal; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(keyHash: string): Principal | undefined {
    const entry = this.entries.get(keyHash);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(keyHash);
      return undefined;
    }
    return entry.principal;
  }

  set(keyHash: string, principal: Principal): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(keyHash, { principal, expiresAt: this.now() + this.ttlMs });
  }

  /** Evicts a revoked key, found by its hash or its id. */
  evict(keyHash: string, apiKeyId?: string): void {
    this.entries.delete(keyHash);
    if (apiKeyId) this.evictWhere((principal) => principal.apiKeyId === apiKeyId);
  }

  /** Evicts every key whose principal matches, e.g. the keys of a shop whose settings just changed. */
  evictWhere(match: (principal: Principal) => boolean): void {
    for (const [hash, entry] of this.entries) if (match(entry.principal)) this.entries.delete(hash);
  }

  clear(): void {
    this.entries.clear();
  }
}
