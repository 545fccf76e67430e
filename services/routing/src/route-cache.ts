import { routesFor, type Db, type RouteWithProvider } from "./store";

export type RouteQuery = { type: string; method: string; currency: string; settlementCurrency: string };

/**
 * Candidate routes per (type, method, currency pair), kept for `ttlMs`: routes and providers are
 * configuration read on every allocation, so a change takes effect within the TTL instead of
 * costing a join per create.
 */
export function cachedRoutesFor(db: Db, ttlMs: number): (q: RouteQuery) => Promise<RouteWithProvider[]> {
  const cache = new Map<string, { at: number; routes: Promise<RouteWithProvider[]> }>();
  return (q) => {
    const key = `${q.type}|${q.method}|${q.currency}|${q.settlementCurrency}`;
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return hit.routes;
    const routes = routesFor(db, q);
    cache.set(key, { at: Date.now(), routes });
    routes.catch(() => cache.delete(key));
    return routes;
  };
}
