/**
 * Spans of internal RPCs, as Connect interceptors: one server span per call handled, one client
 * span per call made, with the W3C `traceparent` in the request headers between them. Built only
 * when a tracer provider is registered (tracingActive): with tracing off the interceptor lists do
 * not hold them, so a call pays nothing.
 */
import { ConnectError, Code, type Interceptor, type UnaryRequest } from "@connectrpc/connect";
import { context, propagation, ROOT_CONTEXT, trace, type Context } from "@opentelemetry/api";
import { inSpan, SpanKind, tracingActive } from "../runtime/tracing";
import { rpcMethodLabel } from "./rpc-metrics";

const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
};
const headerSetter = { set: (carrier: Headers, key: string, value: string) => carrier.set(key, value) };

/** The codes a server answers for its own faults, as OpenTelemetry's RPC conventions count them; other codes are answers (not found, a refusal). */
const SERVER_FAULTS = new Set([Code.Unknown, Code.DeadlineExceeded, Code.Unimplemented, Code.Internal, Code.Unavailable, Code.DataLoss]);
const isServerFault = (err: unknown) => SERVER_FAULTS.has(ConnectError.from(err).code);

/**
 * A span per unary call, child of `parentOf(req)`, named by the method as gRPC names it; a client's
 * sends its context as `traceparent`. A failure leaves its Connect code on the span, and marks it
 * failed on the client always, on the server when it is a fault of the server's. Streams
 * (Health.Watch, reflection) are left out: their span would last as long as the stream.
 */
function traced(kind: SpanKind, parentOf: (req: UnaryRequest) => Context): Interceptor {
  const isFault = kind === SpanKind.SERVER ? isServerFault : undefined;
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const method = rpcMethodLabel(req);
    return inSpan(method, parentOf(req), { kind, attributes: { "rpc.system.name": "connect_rpc", "rpc.method": method }, isFault }, async (span) => {
      if (kind === SpanKind.CLIENT) propagation.inject(context.active(), req.header, headerSetter);
      try {
        return await next(req);
      } catch (err) {
        span.setAttribute("rpc.response.status_code", Code[ConnectError.from(err).code]);
        throw err;
      }
    });
  };
}

/**
 * Server side: the span continues the caller's trace from the request's `traceparent`, unless a
 * span is already current (the HTTP instrumentation's, itself continued from that header).
 */
const tracingServer = traced(SpanKind.SERVER, (req) =>
  trace.getSpan(context.active()) ? context.active() : propagation.extract(ROOT_CONTEXT, req.header, headerGetter),
);

/** Client side: the span is a child of whatever runs now. */
const tracingClient = traced(SpanKind.CLIENT, () => context.active());

/** The server's tracing interceptor, or none when tracing is off. */
export const tracingServerInterceptors = (): Interceptor[] => (tracingActive() ? [tracingServer] : []);

/** A transport's tracing interceptor, or none when tracing is off. */
export const tracingClientInterceptors = (): Interceptor[] => (tracingActive() ? [tracingClient] : []);
