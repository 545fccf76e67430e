/**
 * Key hashes operations has just answered "no such key" for (unknown or revoked), kept for a short
 * TTL so a flood of one made-up key costs one call to operations per TTL, not one per request.
 *
 * Why this never refuses a key that works: an entry only says what operations answered, and the
 * answer can change only one way that matters, a key being issued after its hash was cached here.
 * Keys are 256 random bits made by operations at issue, so no one can present a key before it is
 * issued without guessing it; the only key a caller can make the gateway cache is one that does
 * not exist and never will. A revoked key stays revoked, so its entry is right for ever. The TTL
 * only bounds a mistake outside that reasoning: API_KEY_HASH_SECRET differing between the gateway
 * and operations during a rotation makes every key unknown until both agree, then at most one TTL
 * more.
 */
export class UnknownKeys {
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  has(keyHash: string): boolean {
    const expiresAt = this.expiries.get(keyHash);
    if (expiresAt === undefined) return false;
    if (expiresAt > this.now()) return true;
    this.expiries.delete(keyHash);
    return false;
  }

  /** Records an answer "no such key"; past `maxEntries` the oldest entry goes (it costs one more call). */
  add(keyHash: string): void {
    if (this.ttlMs <= 0) return;
    this.expiries.delete(keyHash);
    if (this.expiries.size >= this.maxEntries) this.expiries.delete(this.expiries.keys().next().value!);
    this.expiries.set(keyHash, this.now() + this.ttlMs);
  }
}
