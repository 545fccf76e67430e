/**
 * Tracing costs nothing until a tracer provider is registered: no interceptor in the RPC lists, no
 * trace context kept with rows, no span looked up per log line. Once one is, spans continue a
 * stored `traceparent` and log lines carry the span's ids.
 */
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { AppError } from "@pgw/contracts";
import { toConnectError } from "@pgw/kit/rpc";
import { continuingTrace, createLogger, currentTraceparent, SpanKind, tracingActive, withRequestId } from "@pgw/kit/runtime";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { tracingClientInterceptors, tracingServerInterceptors } from "../src/rpc/rpc-tracing";
import { recordSpans } from "@pgw/kit/testing";

function loggedLines(log: (logger: ReturnType<typeof createLogger>) => void): Record<string, unknown>[] {
  const written: string[] = [];
  const logger = createLogger("test", "info", { write: (text: string) => written.push(text) });
  log(logger);
  logger.flush();
  return written.join("").trim().split("\n").map((line) => JSON.parse(line));
}

test("with no tracer provider, nothing of tracing is in the call path", async () => {
  expect(tracingActive()).toBe(false);
  expect([...tracingServerInterceptors(), ...tracingClientInterceptors()]).toEqual([]);
  const seen = await continuingTrace("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "step", {}, async () => currentTraceparent());
  expect(seen).toBeUndefined();
  expect(loggedLines((log) => log.info("line"))[0]).not.toHaveProperty("trace_id");
});

test("with one, a stored traceparent is continued and the lines logged in its span carry its ids", async () => {
  const recorded = recordSpans();
  try {
    expect(tracingActive()).toBe(true);
    expect(tracingServerInterceptors()).toHaveLength(1);
    const stored = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const lines = await continuingTrace(stored, "step", { kind: SpanKind.CONSUMER }, async () =>
      loggedLines((log) => {
        log.info("inside");
        withRequestId("request-1", () => log.info("inside a request"));
      }),
    );
    const [span] = recorded.spans();
    expect(span).toMatchObject({ name: "step", kind: SpanKind.CONSUMER, parentSpanContext: { spanId: "b7ad6b7169203331" } });
    expect(span.spanContext().traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(lines[0]).toMatchObject({ msg: "inside", trace_id: "0af7651916cd43dd8448eb211c80319c", span_id: span.spanContext().spanId });
    expect(lines[1]).toMatchObject({ msg: "inside a request", request_id: "request-1", trace_id: "0af7651916cd43dd8448eb211c80319c", span_id: span.spanContext().spanId });
  } finally {
    await recorded.stop();
  }
});

test("an RPC is a client span with the server span under it; only the server's own faults fail the server span", async () => {
  const recorded = recordSpans();
  try {
    const transport = createRouterTransport(
      ({ service }) =>
        service(LedgerService, {
          getBalances: (req) => {
            throw toConnectError(req.shopId === "missing" ? new AppError("not_found", "shop not found") : new Error("boom"));
          },
        }),
      { router: { interceptors: tracingServerInterceptors() }, transport: { interceptors: tracingClientInterceptors() } },
    );
    const ledger = createClient(LedgerService, transport);
    await expect(ledger.getBalances({ shopId: "missing" })).rejects.toThrow("shop not found");
    await expect(ledger.getBalances({ shopId: "broken" })).rejects.toThrow();
    const spans = recorded.spans();
    const [refusedServer, failedServer] = spans.filter((s) => s.kind === SpanKind.SERVER);
    const [refusedClient, failedClient] = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(refusedServer.parentSpanContext?.spanId).toBe(refusedClient.spanContext().spanId);
    expect(refusedServer.spanContext().traceId).toBe(refusedClient.spanContext().traceId);
    expect(refusedServer).toMatchObject({ name: "pgw.ledger.v1.LedgerService/GetBalances", attributes: { "rpc.response.status_code": "NotFound" }, status: { code: 0 } });
    expect(refusedClient.status.code).toBe(2);
    expect(failedServer).toMatchObject({ attributes: { "rpc.response.status_code": "Internal" }, status: { code: 2 } });
    expect(failedClient.status.code).toBe(2);
  } finally {
    await recorded.stop();
  }
});
