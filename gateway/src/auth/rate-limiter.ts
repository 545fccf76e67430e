/** The outcome of taking one token, with what the RateLimit-* headers report. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (RateLimit-Reset) or, when refused, until one token is back. */
  resetSeconds: number;
  retryAfterSeconds: number;
}

/**
 * Token buckets by key (docs/api.md, Rate limits): the public API keeps one per shop, refilled at
 * its rate_limit_rps and holding a burst of twice that. Kept per gateway replica.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updatedAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  take(key: string, rps: number): RateDecision {
    const capacity = rps * 2;
    const t = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: capacity, updatedAt: t };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((t - bucket.updatedAt) / 1000) * rps);
    bucket.updatedAt = t;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    if (this.buckets.size > 100_000) this.dropFullBuckets(t);
    return {
      allowed,
      limit: capacity,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((capacity - bucket.tokens) / rps),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / rps)),
    };
  }

  // A bucket idle long enough to be full again carries no state worth keeping.
  private dropFullBuckets(t: number): void {
    for (const [key, b] of this.buckets) if (t - b.updatedAt > 60_000) this.buckets.delete(key);
  }
}
