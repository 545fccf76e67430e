import { KeyCache } from "./key-cache";

const principal = (apiKeyId: string) => ({ apiKeyId, merchantId: "m", shopId: "s", rateLimitRps: 100 });

describe("API key cache", () => {
  it("serves an entry until its TTL, due for a refresh from half the TTL on, once per tenth of the TTL", () => {
    let now = 0;
    const cache = new KeyCache(1000, 10, () => now);
    cache.set("h1", principal("k1"), cache.generation);
    now = 499;
    expect(cache.get("h1")).toEqual({ principal: principal("k1"), refreshDue: false });
    now = 500;
    expect(cache.get("h1")).toEqual({ principal: principal("k1"), refreshDue: true });
    now = 599; // the first caller past half the TTL refreshes; another is due only after a tenth of the TTL
    expect(cache.get("h1")).toEqual({ principal: principal("k1"), refreshDue: false });
    now = 600;
    expect(cache.get("h1")?.refreshDue).toBe(true);
    now = 699;
    expect(cache.get("h1")?.refreshDue).toBe(false);
    now = 1000;
    expect(cache.get("h1")).toBeUndefined();
  });

  it("starts the TTL again when a refresh stores the key anew", () => {
    let now = 0;
    const cache = new KeyCache(1000, 10, () => now);
    cache.set("h1", principal("k1"), cache.generation);
    now = 800;
    cache.set("h1", principal("k1"), cache.generation);
    now = 1200;
    expect(cache.get("h1")).toEqual({ principal: principal("k1"), refreshDue: false });
  });

  it("evicts a revoked key by hash or by id", () => {
    const cache = new KeyCache(60_000);
    cache.set("h1", principal("k1"), cache.generation);
    cache.set("h2", principal("k2"), cache.generation);
    cache.evict("unknown-hash", "k2");
    cache.evict("h1");
    expect([cache.get("h1"), cache.get("h2")]).toEqual([undefined, undefined]);
  });

  it("evicts every key whose principal matches, and only those", () => {
    const cache = new KeyCache(60_000);
    cache.set("h1", { ...principal("k1"), shopId: "shop-a" }, cache.generation);
    cache.set("h2", { ...principal("k2"), shopId: "shop-a" }, cache.generation);
    cache.set("h3", { ...principal("k3"), shopId: "shop-b" }, cache.generation);
    cache.evictWhere((p) => p.shopId === "shop-a");
    expect([cache.get("h1"), cache.get("h2"), cache.get("h3")?.principal.apiKeyId]).toEqual([undefined, undefined, "k3"]);
  });

  it("does not store an answer read before an eviction, revocation or reconnect", () => {
    const cache = new KeyCache(60_000);
    for (const evict of [() => cache.evict("h9"), () => cache.evictWhere(() => false), () => cache.clear()]) {
      const before = cache.generation;
      evict();
      cache.set("h1", principal("k1"), before);
      expect(cache.get("h1")).toBeUndefined();
      cache.set("h1", principal("k1"), cache.generation);
      expect(cache.get("h1")?.principal.apiKeyId).toBe("k1");
      cache.clear();
    }
  });

  it("stays bounded, dropping the key stored longest ago", () => {
    const cache = new KeyCache(60_000, 2);
    cache.set("h1", principal("k1"), cache.generation);
    cache.set("h2", principal("k2"), cache.generation);
    cache.set("h1", principal("k1"), cache.generation); // refreshed: now the newest
    cache.set("h3", principal("k3"), cache.generation);
    expect([cache.get("h1")?.principal.apiKeyId, cache.get("h2"), cache.get("h3")?.principal.apiKeyId]).toEqual(["k1", undefined, "k3"]);
  });
});
