/**
 * Routes and providers are configuration read on every allocation and every provider callback: they
 * are kept for `ttlMs` (ROUTES_CACHE_MS), so a change takes effect within it instead of costing a
 * statement per create or callback. The loads are the store's.
 */
import { findProviderByCode, routesFor, type ProviderRow, type RouteWithProvider } from "./providers";
import type { Sql } from ".";

export type RouteQuery = { type: string; method: string };

/**
 * Answers of `load` per key, kept for `ttlMs`. A failed load and an answer of nothing (undefined or
 * null) are forgotten at once, so keys that come from outside (a callback's provider code) cannot
 * fill the cache with misses.
 */
export function cached<Q, V>(ttlMs: number, keyOf: (q: Q) => string, load: (q: Q) => Promise<V>): (q: Q) => Promise<V> {
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
    value.then((v) => v == null && forget(), forget);
    return value;
  };
}

export interface ConfigCache {
  /** Routes of a type and method, every currency pair, with their providers. */
  routesFor(q: RouteQuery): Promise<RouteWithProvider[]>;
  /** A provider by its code (undefined when none has it). */
  providerByCode(code: string): Promise<ProviderRow | undefined>;
}

/** The unit's configuration cache over its database. */
export function configCache(sql: Sql, ttlMs: number): ConfigCache {
  return {
    routesFor: cached(ttlMs, (q) => `${q.type}|${q.method}`, (q) => routesFor(sql, q)),
    providerByCode: cached(ttlMs, (code) => code, (code) => findProviderByCode(sql, code)),
  };
}
