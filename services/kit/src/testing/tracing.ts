/**
 * Tracing in a test process, as tracing-register.ts does it in a unit's own process: a tracer
 * provider, the async-hooks context manager, the W3C propagator and the undici instrumentation
 * (the provider calls; it listens on undici's diagnostics channels), registered before the stack
 * starts, with every ended span kept in memory. The http and pg instrumentations are left out:
 * they patch modules as Node's loader hands them out, which Jest's module registry bypasses. The
 * Koa edge opens the request's span itself when no instrumentation did (request-span.ts).
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from "@opentelemetry/sdk-trace";

export type { ReadableSpan };

export interface RecordedSpans {
  /** Every span ended so far. */
  spans(): ReadableSpan[];
  /** Unregisters everything this registered. */
  stop(): Promise<void>;
}

/** Registers tracing for this process and records its spans; call before anything that should be traced starts. */
export function recordSpans(): RecordedSpans {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const undici = new UndiciInstrumentation();
  return {
    spans: () => exporter.getFinishedSpans(),
    async stop() {
      undici.disable();
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
