/** The outcome of taking one token, with what the RateLimit-* headers report. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (RateLimit-Reset) or, when refused, until one token is back. */
  resetSeconds: number;
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  capacity: number;
  updatedAt: number;
}

/**
 * Token buckets by name (docs/api.md, Rate limits; decisions/0012, 0023): the public API keeps one
 * per API key, refilled at its shop's rate_limit_rps and holding a burst of twice that, and one per
 * client address for key lookups that find no valid key; the admin API one per client address for
 * failed sign-ins. Each gateway replica keeps its own buckets, at most `maxBuckets` of them: past
 * that the least recently used is dropped (it starts full again, as an idle one would be). API
 * keys' buckets are kept in step across replicas by `KeyRateLimits` (decisions/0017).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxBuckets = 100_000,
  ) {}

  /** Takes one token from `key`'s bucket, refilled at `rps` per second and holding `burst`. */
  take(key: string, rps: number, burst = rps * 2): RateDecision {
    const t = this.now();
    const bucket = this.refilled(key, rps, burst, t);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return {
      allowed,
      limit: burst,
      remaining: Math.max(0, Math.floor(bucket.tokens)),
      resetSeconds: Math.ceil((burst - bucket.tokens) / rps),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / rps)),
    };
  }

  /**
   * Takes `tokens` spent elsewhere (another gateway replica) from `key`'s bucket, refilled at `rps`
   * and holding `burst`. The bucket may fall below zero, down to minus one burst: it then refuses
   * until refilled past the debt, so the total across replicas stays at the rate.
   */
  charge(key: string, tokens: number, rps: number, burst = rps * 2): void {
    const bucket = this.refilled(key, rps, burst, this.now());
    bucket.tokens = Math.max(-burst, bucket.tokens - tokens);
  }

  /** Puts back a token taken for an attempt that turned out not to count. */
  giveBack(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(bucket.capacity, bucket.tokens + 1);
  }

  private refilled(key: string, rps: number, burst: number, t: number): Bucket {
    const bucket = this.buckets.get(key) ?? { tokens: burst, capacity: burst, updatedAt: t };
    bucket.tokens = Math.min(burst, bucket.tokens + ((t - bucket.updatedAt) / 1000) * rps);
    bucket.capacity = burst;
    bucket.updatedAt = t;
    // Re-inserted, so the map's order is least recently used first.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value!);
    return bucket;
  }
}
