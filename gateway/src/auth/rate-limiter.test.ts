import { RateLimiter } from "./rate-limiter";

describe("token bucket per key", () => {
  it("allows a burst of twice the rate, then refills at the rate", () => {
    let now = 0;
    const limiter = new RateLimiter(() => now);
    const burst = Array.from({ length: 5 }, () => limiter.take("k", 2).allowed);
    expect(burst).toEqual([true, true, true, true, false]);
    const refused = limiter.take("k", 2);
    expect(refused).toMatchObject({ allowed: false, limit: 4, remaining: 0, retryAfterSeconds: 1 });
    now += 500; // one token back at 2/s
    expect(limiter.take("k", 2).allowed).toBe(true);
    expect(limiter.take("k", 2).allowed).toBe(false);
  });

  it("keeps keys apart", () => {
    const limiter = new RateLimiter(() => 0);
    limiter.take("a", 1);
    limiter.take("a", 1);
    expect(limiter.take("a", 1).allowed).toBe(false);
    expect(limiter.take("b", 1).allowed).toBe(true);
  });
});
