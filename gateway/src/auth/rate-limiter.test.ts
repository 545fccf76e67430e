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

describe("token buckets with a burst of their own, given back, bounded", () => {
  it("holds the burst it is given and refills at the rate", () => {
    let now = 0;
    const limiter = new RateLimiter(() => now);
    expect(Array.from({ length: 4 }, () => limiter.take("k", 0.5, 3).allowed)).toEqual([true, true, true, false]);
    expect(limiter.take("k", 0.5, 3)).toMatchObject({ allowed: false, limit: 3, retryAfterSeconds: 2 });
    now += 2000;
    expect(limiter.take("k", 0.5, 3).allowed).toBe(true);
  });

  it("takes back a token that did not count, never above the burst", () => {
    const limiter = new RateLimiter(() => 0);
    limiter.take("k", 1, 1);
    limiter.giveBack("k");
    limiter.giveBack("k");
    expect([limiter.take("k", 1, 1).allowed, limiter.take("k", 1, 1).allowed]).toEqual([true, false]);
  });

  it("charges tokens spent elsewhere, into a debt of at most one burst that refills at the rate", () => {
    let now = 0;
    const limiter = new RateLimiter(() => now);
    limiter.charge("k", 3, 2); // a burst of 4, one left
    expect(limiter.take("k", 2)).toMatchObject({ allowed: true, remaining: 0 });
    limiter.charge("k", 100, 2); // owes 4 at most
    expect(limiter.take("k", 2)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 3, resetSeconds: 4 });
    now += 2000; // 4 tokens back: out of debt, none to spend yet
    expect(limiter.take("k", 2).allowed).toBe(false);
    now += 500;
    expect(limiter.take("k", 2).allowed).toBe(true);
  });

  it("drops the least recently used bucket past its bound, which then starts full", () => {
    const limiter = new RateLimiter(() => 0, 2);
    limiter.take("a", 1, 1);
    limiter.take("b", 1, 1);
    limiter.take("a", 1, 1); // refused, but now the most recently used
    limiter.take("c", 1, 1); // drops b
    expect([limiter.take("a", 1, 1).allowed, limiter.take("b", 1, 1).allowed]).toEqual([false, true]);
  });
});
