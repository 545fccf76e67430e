import { LRUCache } from "lru-cache";
import { KeyCache, type KeySource, type Principal } from "./key-cache";

const principal = (apiKeyId: string, shopId = "s") => ({ apiKeyId, merchantId: "m", shopId, rateLimitRps: 100 });

/** The clock's start: lru-cache reads an entry stored at time 0 as one that never expires. */
const T0 = 1_000_000;

const settle = () => new Promise((r) => setImmediate(r));

/** A key source whose resolves wait until the test answers them, in `calls` order. */
function source() {
  const calls: { keyHash: string; answer: (principal: Principal | undefined) => void; fail: (err: Error) => void }[] = [];
  const failures: unknown[] = [];
  const src: KeySource = {
    resolve: (keyHash) => new Promise((answer, fail) => calls.push({ keyHash, answer, fail })),
    refreshFailed: (_keyHash, err) => failures.push(err),
  };
  return { src, calls, failures };
}

/** Stores `principal` for `keyHash` through a resolve that answers at once. */
const store = (cache: KeyCache, keyHash: string, p: Principal) => cache.fetch(keyHash, { resolve: async () => p, refreshFailed: () => undefined });

describe("API key cache", () => {
  let now = T0;
  beforeEach(() => (now = T0));

  it("serves an entry until its TTL, refreshing it in the background from half the TTL on, once per tenth of the TTL while refreshes fail", async () => {
    const cache = new KeyCache(1000, { maxEntries: 10, now: () => now });
    const { src, calls, failures } = source();
    const first = cache.fetch("h1", src);
    calls[0].answer(principal("k1"));
    expect(await first).toEqual(principal("k1"));
    now = T0 + 499;
    expect(cache.get("h1", src)).toEqual(principal("k1"));
    expect(calls).toHaveLength(1);
    now = T0 + 500; // half the TTL: this caller starts a refresh and is answered at once
    expect(cache.get("h1", src)).toEqual(principal("k1"));
    expect(calls).toHaveLength(2);
    now = T0 + 550;
    expect(cache.get("h1", src)).toEqual(principal("k1")); // served while the refresh is in flight
    calls[1].fail(new Error("operations is down"));
    await settle();
    expect(failures).toHaveLength(1);
    now = T0 + 599; // the next refresh is due a tenth of the TTL after the failed one started
    expect(cache.get("h1", src)).toEqual(principal("k1"));
    expect(calls).toHaveLength(2);
    now = T0 + 600;
    expect(cache.get("h1", src)).toEqual(principal("k1"));
    expect(calls).toHaveLength(3);
    calls[2].fail(new Error("operations is down"));
    await settle();
    now = T0 + 1000; // the failed refreshes left the entry to expire at its own TTL
    expect(cache.has("h1")).toBe(true);
    now = T0 + 1001;
    expect(cache.get("h1", src)).toBeUndefined();
    expect(calls).toHaveLength(3);
  });

  it("starts the TTL again when a refresh stores the key anew", async () => {
    const cache = new KeyCache(1000, { now: () => now });
    const { src, calls } = source();
    await store(cache, "h1", principal("k1"));
    now = T0 + 800;
    cache.get("h1", src);
    calls[0].answer(principal("k1", "s2"));
    await settle();
    now = T0 + 1200;
    expect(cache.get("h1", src)).toEqual(principal("k1", "s2"));
    expect(calls).toHaveLength(1); // due again only at 800 + 500
    now = T0 + 1801;
    expect(cache.has("h1")).toBe(false);
  });

  it("resolves a key once for all the callers of a moment; no such key is answered as undefined and not kept", async () => {
    const cache = new KeyCache(60_000, { now: () => now });
    const { src, calls } = source();
    const known = Promise.all([cache.fetch("h1", src), cache.fetch("h1", src), cache.fetch("h1", src)]);
    expect(calls).toHaveLength(1);
    calls[0].answer(principal("k1"));
    expect(await known).toEqual([principal("k1"), principal("k1"), principal("k1")]);
    const unknown = Promise.all([cache.fetch("h2", src), cache.fetch("h2", src)]);
    calls[1].answer(undefined);
    expect(await unknown).toEqual([undefined, undefined]);
    expect(calls).toHaveLength(2);
    expect(cache.has("h2")).toBe(false);
  });

  it("drops a key that the background refresh no longer finds", async () => {
    const cache = new KeyCache(1000, { now: () => now });
    const { src, calls, failures } = source();
    await store(cache, "h1", principal("k1"));
    now = T0 + 500;
    expect(cache.get("h1", src)).toEqual(principal("k1"));
    calls[0].answer(undefined); // revoked, and this gateway missed the event
    await settle();
    expect(cache.has("h1")).toBe(false);
    expect(failures).toEqual([]);
  });

  it("does not serve an entry past its TTL while its refresh is in flight: the caller waits for the refresh, and gets its error", async () => {
    const cache = new KeyCache(1000, { now: () => now });
    const { src, calls } = source();
    await store(cache, "h1", principal("k1"));
    now = T0 + 999;
    cache.get("h1", src);
    now = T0 + 1001;
    expect(cache.get("h1", src)).toBeUndefined();
    const waiting = cache.fetch("h1", src);
    expect(calls).toHaveLength(1); // no second call: it waits for the refresh
    calls[0].fail(new Error("operations is down"));
    await expect(waiting).rejects.toThrow("operations is down");
  });

  it("evicts a revoked key by hash or by id", async () => {
    const cache = new KeyCache(60_000);
    await store(cache, "h1", principal("k1"));
    await store(cache, "h2", principal("k2"));
    cache.evict("unknown-hash", "k2");
    cache.evict("h1");
    expect([cache.has("h1"), cache.has("h2")]).toEqual([false, false]);
  });

  it("evicts every key whose principal matches, and only those", async () => {
    const cache = new KeyCache(60_000);
    await store(cache, "h1", principal("k1", "shop-a"));
    await store(cache, "h2", principal("k2", "shop-a"));
    await store(cache, "h3", principal("k3", "shop-b"));
    cache.evictWhere((p) => p.shopId === "shop-a");
    expect([cache.has("h1"), cache.has("h2"), cache.has("h3")]).toEqual([false, false, true]);
  });

  it.each([
    ["a revocation event", (cache: KeyCache, keyHash: string) => cache.evict(keyHash)],
    ["an eviction by principal (a first resolve has none yet)", (cache: KeyCache) => cache.evictWhere(() => false)],
    ["a reconnect", (cache: KeyCache) => cache.clear()],
  ])("does not keep an answer that %s overtook, gives it to the callers already waiting, and asks anew for the next", async (_, evict) => {
    const cache = new KeyCache(60_000, { now: () => now });
    const { src, calls } = source();
    const waiting = cache.fetch("h1", src);
    evict(cache, "h1");
    calls[0].answer(principal("k1"));
    expect(await waiting).toEqual(principal("k1"));
    expect(cache.has("h1")).toBe(false);

    // A caller after the eviction does not join the overtaken resolve, whose late answer cannot replace the new one.
    const overtaken = cache.fetch("h2", src);
    evict(cache, "h2");
    const next = cache.fetch("h2", src);
    expect(calls).toHaveLength(3);
    calls[2].answer(principal("k2", "after"));
    expect(await next).toEqual(principal("k2", "after"));
    calls[1].answer(principal("k2", "before"));
    expect(await overtaken).toEqual(principal("k2", "before"));
    expect(cache.get("h2", src)).toEqual(principal("k2", "after"));

    // "No such key" reaches the callers of an overtaken resolve as such, not as the abort's error.
    const gone = cache.fetch("h3", src);
    evict(cache, "h3");
    calls[3].answer(undefined);
    expect(await gone).toBeUndefined();
  });

  it("does not keep a refresh that a revocation overtook, and keeps one that an eviction by principal does not match", async () => {
    const cache = new KeyCache(1000, { now: () => now });
    const { src, calls } = source();
    await store(cache, "h1", principal("k1"));
    await store(cache, "h2", principal("k2"));
    now = T0 + 500;
    cache.get("h1", src);
    cache.get("h2", src);
    cache.evictWhere((p) => p.apiKeyId === "k1");
    calls.forEach((call) => call.answer(principal(call.keyHash === "h1" ? "k1" : "k2")));
    await settle();
    expect([cache.has("h1"), cache.has("h2")]).toEqual([false, true]);
    now = T0 + 1400; // h2 was stored anew at 500
    expect(cache.has("h2")).toBe(true);
  });

  it("stays bounded, dropping the least recently used key", async () => {
    const cache = new KeyCache(60_000, { maxEntries: 2, now: () => now });
    const { src } = source();
    await store(cache, "h1", principal("k1"));
    await store(cache, "h2", principal("k2"));
    cache.get("h1", src); // used: now the most recent
    await store(cache, "h3", principal("k3"));
    expect([cache.has("h1"), cache.has("h2"), cache.has("h3")]).toEqual([true, false, true]);
  });

  it("relies on lru-cache storing no fetch whose key was deleted or cleared while it ran (with ignoreFetchAbort, the fetch still answers)", async () => {
    for (const remove of [(lru: LRUCache<string, string>) => lru.delete("k"), (lru: LRUCache<string, string>) => lru.clear()]) {
      let finish = (_: string) => undefined as void;
      const lru = new LRUCache<string, string>({ max: 10, ignoreFetchAbort: true, fetchMethod: () => new Promise<string>((r) => (finish = r)) });
      lru.set("other", "value");
      const fetched = lru.fetch("k");
      remove(lru);
      finish("answer");
      expect(await fetched).toBe("answer");
      expect(lru.has("k")).toBe(false);
    }
  });
});
