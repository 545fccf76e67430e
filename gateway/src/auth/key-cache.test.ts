import { KeyCache } from "./key-cache";

const principal = (apiKeyId: string) => ({ apiKeyId, merchantId: "m", shopId: "s", rateLimitRps: 100 });

describe("API key cache", () => {
  it("expires entries after the TTL", () => {
    let now = 0;
    const cache = new KeyCache(1000, 10, () => now);
    cache.set("h1", principal("k1"));
    now = 999;
    expect(cache.get("h1")?.apiKeyId).toBe("k1");
    now = 1000;
    expect(cache.get("h1")).toBeUndefined();
  });

  it("evicts a revoked key by hash or by id", () => {
    const cache = new KeyCache(60_000);
    cache.set("h1", principal("k1"));
    cache.set("h2", principal("k2"));
    cache.evict("unknown-hash", "k2");
    cache.evict("h1");
    expect([cache.get("h1"), cache.get("h2")]).toEqual([undefined, undefined]);
  });

  it("evicts every key whose principal matches, and only those", () => {
    const cache = new KeyCache(60_000);
    cache.set("h1", { ...principal("k1"), shopId: "shop-a" });
    cache.set("h2", { ...principal("k2"), shopId: "shop-a" });
    cache.set("h3", { ...principal("k3"), shopId: "shop-b" });
    cache.evictWhere((p) => p.shopId === "shop-a");
    expect([cache.get("h1"), cache.get("h2"), cache.get("h3")?.apiKeyId]).toEqual([undefined, undefined, "k3"]);
  });

  it("stays bounded", () => {
    const cache = new KeyCache(60_000, 2);
    cache.set("h1", principal("k1"));
    cache.set("h2", principal("k2"));
    cache.set("h3", principal("k3"));
    expect([cache.get("h1"), cache.get("h3")?.apiKeyId]).toEqual([undefined, "k3"]);
  });
});
