/**
 * Tracing in a test process, as tracing-register.ts does it in a unit's own process: a tracer
 * provider, the async-hooks context manager, the W3C propagator and the http and undici
 * instrumentations, registered before the stack starts, with every ended span kept in memory.
 * pg's instrumentation is left out: it patches `pg` as it loads, which Jest's module registry does
 * not let it see.
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
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
  const instrumentations = [new HttpInstrumentation(), new UndiciInstrumentation()];
  return {
    spans: () => exporter.getFinishedSpans(),
    async stop() {
      instrumentations.forEach((i) => i.disable());
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
