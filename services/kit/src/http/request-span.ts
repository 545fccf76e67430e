/**
 * The span of a request at a Koa edge (the gateway's public and admin ports), holding every log
 * line and RPC of the request. The HTTP instrumentation's span when it runs (a unit started with
 * the tracing entry); otherwise, with tracing on all the same (a test's tracer provider), one of
 * ours that continues the caller's `traceparent` as that instrumentation would. Nothing with
 * tracing off.
 */
import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace } from "@opentelemetry/api";
import type Koa from "koa";
import { inSpan, SpanKind, tracingActive } from "../runtime/tracing";

type Run = (ctx: Koa.Context, fn: () => Promise<void>) => Promise<void>;

const untraced: Run = (_ctx, fn) => fn();

const traced: Run = (ctx, fn) => {
  if (trace.getSpan(context.active())) return fn();
  const parent = propagation.extract(ROOT_CONTEXT, ctx.headers);
  return inSpan(ctx.method, parent, { kind: SpanKind.SERVER, attributes: { "http.request.method": ctx.method, "url.path": ctx.path } }, async (span) => {
    await fn();
    // Named by the route template, as the HTTP instrumentation names its spans once Koa matched one.
    const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
    if (typeof route === "string") span.updateName(`${ctx.method} ${route}`).setAttribute("http.route", route);
    span.setAttribute("http.response.status_code", ctx.status);
    if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  });
};

/** How a middleware built now runs a request: in its span when tracing is on, as it is otherwise. */
export const requestSpan = (): Run => (tracingActive() ? traced : untraced);
