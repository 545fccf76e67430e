import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import pino, { type Logger } from "pino";
import { maskCardNumbersIn } from "@pgw/contracts";
import { currentTraceIds, tracingActive } from "./tracing";

export type { Logger } from "pino";

/** Header carrying the request id across the gateway and every gRPC hop. */
export const REQUEST_ID_HEADER = "x-request-id";

const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/** The request id of the call being handled, if any. */
export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/** `requestId` when it is one we accept (1–128 of letters, digits, `_.:-`), else a new one. */
export function acceptedRequestId(requestId: string | undefined | null): string {
  return requestId && /^[\w.:-]{1,128}$/.test(requestId) ? requestId : randomUUID();
}

/** Runs `fn` with `requestId` (or a new one) as the current request id. */
export function withRequestId<T>(requestId: string | undefined | null, fn: () => T): T {
  return requestContext.run({ requestId: acceptedRequestId(requestId) }, fn);
}

/** A batch is written once it holds this many characters (8 KiB of ASCII JSON)… */
const BATCH_CHARS = 8192;
/** …or this long after its first line, whichever comes first. */
const BATCH_MS = 50;

/** Batchers holding lines not yet written, flushed when the process exits. */
const unwritten = new Set<LineBatcher>();
process.once("exit", () => unwritten.forEach((batcher) => batcher.flush()));

/**
 * Gathers log lines and hands them to `sink` in batches: one write syscall per request (the
 * gateway's access line) cost about a tenth of the gateway's CPU on a read, and the launcher reading
 * them in local mode as much again. What is still gathered when the process exits is written by
 * an `exit` handler; a process killed outright (SIGKILL, OOM) loses at most the last BATCH_MS.
 */
export class LineBatcher {
  private text = "";
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly sink: { write(text: string): unknown }) {}

  write(line: string): void {
    this.text += line;
    if (this.text.length >= BATCH_CHARS) return this.flush();
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), BATCH_MS).unref();
    unwritten.add(this);
  }

  /** Writes what is gathered now; `done` is pino's `logger.flush` callback. */
  flush(done?: () => void): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    unwritten.delete(this);
    if (this.text !== "") {
      const text = this.text;
      this.text = "";
      this.sink.write(text);
    }
    done?.();
  }
}

/** Where a logger writes its batches of JSON lines. */
export type LogSink = { write(text: string): unknown };

let defaultSink = (): LogSink => pino.destination({ fd: 1, sync: true });

/**
 * Makes loggers created from now on without a sink of their own (every unit's) write to `sink`
 * instead of stdout, until the returned function is called: a test that runs whole units in its
 * process reads all their lines so.
 */
export function writeLogsTo(sink: LogSink): () => void {
  const before = defaultSink;
  defaultSink = () => sink;
  return () => {
    defaultSink = before;
  };
}

/**
 * Structured JSON logger of one unit; every line carries the current request id when there is one,
 * the current span's `trace_id` and `span_id` when tracing is on (tracing.ts), and shows a card number only by its first six and last four digits, whoever logged it.
 *
 * Batches (LineBatcher) are written to stdout synchronously. pino's asynchronous destination
 * flushes at exit with a loop that retries a broken pipe every 100 ms for ever (sonic-boom 4), so a
 * unit whose reader had died (a killed launcher) never finished exiting on SIGTERM. A synchronous
 * write meets the broken pipe at once, and pino then drops further lines. A test may pass a `sink`
 * of its own to read the lines, or read every unit's through {@link writeLogsTo}.
 */
export function createLogger(unit: string, level = "info", sink: LogSink = defaultSink()): Logger {
  const lines = new LineBatcher(sink);
  // Asked once: with tracing off no line looks for a span.
  const traceIds = tracingActive() ? currentTraceIds : () => undefined;
  return pino(
    {
      level,
      base: { unit },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: { streamWrite: maskCardNumbersIn },
      // Plain literals, not spreads: a line merged into a spread-built object cost three times as much.
      mixin: () => {
        const requestId = currentRequestId();
        const ids = traceIds();
        if (ids === undefined) return requestId ? { request_id: requestId } : {};
        return requestId ? { request_id: requestId, trace_id: ids.trace_id, span_id: ids.span_id } : ids;
      },
    },
    lines,
  );
}
