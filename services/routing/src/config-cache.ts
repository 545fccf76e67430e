import { findProviderByCode, routesFor, type Db, type ProviderRow, type RouteWithProvider, type Sql } from "./store";

export type RouteQuery = { type: string; method: string };

/**
 * Answers of `load` per key, kept for `ttlMs`. A failed load and a null answer (nothing found) are
 * forgotten at once, so keys that come from outside (a callback's provider code) cannot fill the
 * cache with misses.
 */
function cached<Q, V>(ttlMs: number, keyOf: (q: Q) => string, load: (q: Q) => Promise<V>): (q: Q) => Promise<V> {
  const cache = new Map<string, { at: number; value: Promise<V> }>();
  return (q) => {
    const key = keyOf(q);
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return hit.value;
    const value = load(q);
    const entry = { at: Date.now(), value };
    cache.set(key, entry);
    const forget = () => {
      if (cache.get(key) === entry) cache.delete(key);
    };
    value.then((v) => v === null && forget(), forget);
    return value;
  };
}

/**
 * Routes per (type, method), kept for `ttlMs`: routes and providers are configuration read on every
 * allocation, so a change takes effect within the TTL instead of costing a join per create.
 */
export function cachedRoutesFor(db: Db, ttlMs: number): (q: RouteQuery) => Promise<RouteWithProvider[]> {
  return cached(ttlMs, (q) => `${q.type}|${q.method}`, (q) => routesFor(db, q));
}

/** Providers by code, kept for `ttlMs` like the routes: read on every provider callback. */
export function cachedProviderByCode(sql: Sql, ttlMs: number): (code: string) => Promise<ProviderRow | null> {
  return cached(ttlMs, (code) => code, (code) => findProviderByCode(sql, code));
}
