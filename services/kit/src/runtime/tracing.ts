/**
 * Tracing through the OpenTelemetry API only: the kit's spans (RPC, events, callbacks, webhooks)
 * and the trace context kept with rows that outlive a request (outbox events, allocations,
 * deliveries). Whoever runs the process decides whether anything is recorded: the SDK started by
 * `tracing-register.ts` in production, a test's tracer provider in tests. With neither, every
 * function here is a no-op that allocates nothing per call.
 */
import {
  context,
  INVALID_TRACEID,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from "@opentelemetry/api";

/** The W3C header (and column) that carries a trace context. */
export const TRACEPARENT = "traceparent";

/** The kit's tracer; the unit is the resource's `service.name` (or, in one process, the span's `pgw.unit`). */
export const tracer = () => trace.getTracer("@pgw/kit");

/**
 * True when a tracer provider is registered: a span it starts has a real trace id (even unsampled),
 * a no-op one has none. Asked once where a server, transport or consumer is built, so the code
 * that runs per call can leave tracing out entirely when it is off.
 */
export function tracingActive(): boolean {
  const probe = tracer().startSpan("pgw.probe", {}, ROOT_CONTEXT);
  return probe.spanContext().traceId !== INVALID_TRACEID;
}

/** The `traceparent` of the span running now, to keep with a row this call writes; undefined when there is none. */
export function currentTraceparent(): string | undefined {
  if (trace.getSpan(context.active()) === undefined) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier[TRACEPARENT];
}

/** The context a stored or received `traceparent` names (the root context when there is none). */
export function contextOf(traceparent: string | null | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { [TRACEPARENT]: traceparent }) : ROOT_CONTEXT;
}

/** The ids the logger adds to a line written while a span is current. */
export function currentTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getSpan(context.active());
  if (span === undefined) return undefined;
  const { traceId, spanId } = span.spanContext();
  return traceId === INVALID_TRACEID ? undefined : { trace_id: traceId, span_id: spanId };
}

/**
 * Says at start whether this unit's traces leave: with OTEL_EXPORTER_OTLP_ENDPOINT set, that they
 * do, or, when no tracer provider was registered (the unit was started without the tracing entry),
 * that they cannot and how to start it.
 */
export function reportTracing(source: NodeJS.ProcessEnv, log: { info(o: object, msg: string): void; warn(o: object, msg: string): void }): void {
  const endpoint = source.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return;
  if (tracingActive()) log.info({ endpoint }, "traces exported by OTLP");
  else log.warn({ endpoint }, "OTEL_EXPORTER_OTLP_ENDPOINT is set but tracing was not started: run the unit with node --require services/kit/dist/tracing.js (the image does)");
}

/** Runs `fn` in no trace: background work a traced call only woke (a worker's claim) must not join that call's trace. */
export const outsideTraces = <T>(fn: () => T): T => context.with(ROOT_CONTEXT, fn);

/** Adds business facts (an operation id) to the span running now, for finding its trace; nothing when there is none. */
export function noteOnSpan(attributes: Attributes): void {
  trace.getSpan(context.active())?.setAttributes(attributes);
}

/** Marks `span` failed by `err` (its message only: the stack goes to the log, when anywhere). */
export function recordFailure(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** Whether a failure `fn` throws marks the span failed (default: every one); a refusal that answers the caller need not. */
  isFault?: (err: unknown) => boolean;
}

/**
 * Runs `fn` in a new span, child of `parent`, ended when `fn` settles (failed when it throws). When
 * a span was already current (an HTTP server span, say) it is linked, so a callback that continues
 * an operation's trace still leads back to the request that brought it.
 */
export async function inSpan<T>(name: string, parent: Context, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const current = trace.getSpan(context.active())?.spanContext();
  const links: Link[] = current && parent !== context.active() ? [{ context: current }] : [];
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    if (options.isFault?.(err) ?? true) recordFailure(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Runs `fn` in a span that continues the trace a row kept (`traceparent`, written with
 * {@link currentTraceparent}); without one, `fn` runs as it is, with no span.
 */
export function continuingTrace<T>(traceparent: string | null | undefined, name: string, options: SpanOptions, fn: () => Promise<T>): Promise<T> {
  return traceparent ? inSpan(name, contextOf(traceparent), options, fn) : fn();
}

export { SpanKind };
