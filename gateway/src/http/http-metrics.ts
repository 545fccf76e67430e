/**
 * RED metrics of the gateway's HTTP servers (public API and admin): requests and their latency by
 * route template, method and status class, and the requests refused with 429. Labels stay a small
 * fixed set: the route is the router's template (`/v1/receipts/:id/file`), never the path, and a
 * request no route matched (refused before routing, or unknown) counts under `unmatched`.
 */
import type Koa from "koa";
import { Counter, Histogram, type Registry } from "prom-client";

/** Which of the gateway's servers a request reached. */
export type HttpServerName = "public" | "admin";

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The metrics every server of the unit shares (one registry holds each name once). */
export interface HttpMetrics {
  requests: Counter<"server" | "route" | "method" | "status_class">;
  seconds: Histogram<"server" | "route" | "method">;
  rateLimited: Counter<"server">;
}

export function httpMetrics(registry: Registry): HttpMetrics {
  return {
    requests: new Counter({
      name: "http_requests_total",
      help: "HTTP requests answered, by server, route template, method and status class",
      labelNames: ["server", "route", "method", "status_class"],
      registers: [registry],
    }),
    seconds: new Histogram({
      name: "http_request_duration_seconds",
      help: "Time to answer an HTTP request, by server, route template and method",
      labelNames: ["server", "route", "method"],
      // A read answers in milliseconds; a create may take its whole 15 s budget.
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20],
      registers: [registry],
    }),
    rateLimited: new Counter({ name: "gateway_rate_limited_requests_total", help: "Requests refused with 429 (rate limits), by server", labelNames: ["server"], registers: [registry] }),
  };
}

/**
 * Measures every request of `app` in `metrics` as `server`: a middleware placed before the app's
 * own, so it sees each request's final status, the errors' included. Requests the app hands to
 * Node itself (`ctx.respond = false`: the probes) are not counted.
 */
export function measureHttp(app: Koa, metrics: HttpMetrics, server: HttpServerName): void {
  const measure: Koa.Middleware = async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      if (ctx.respond !== false) {
        const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? "unmatched";
        const method = METHODS.has(ctx.method) ? ctx.method : "other";
        // Each label set a literal: one spread from the other cost twice as much as both metrics' updates.
        metrics.seconds.observe({ server, route, method }, Number(process.hrtime.bigint() - started) / 1e9);
        metrics.requests.inc({ server, route, method, status_class: `${Math.floor(ctx.status / 100)}xx` });
        if (ctx.status === 429) metrics.rateLimited.inc({ server });
      }
    }
  };
  app.middleware.unshift(measure);
}
