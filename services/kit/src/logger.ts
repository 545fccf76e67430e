import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import pino, { type Logger } from "pino";

export type { Logger } from "pino";

/** Header carrying the request id across the gateway and every gRPC hop. */
export const REQUEST_ID_HEADER = "x-request-id";

const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/** The request id of the call being handled, if any. */
export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/** Runs `fn` with `requestId` (or a new one) as the current request id. */
export function withRequestId<T>(requestId: string | undefined | null, fn: () => T): T {
  const id = requestId && /^[\w.:-]{1,128}$/.test(requestId) ? requestId : randomUUID();
  return requestContext.run({ requestId: id }, fn);
}

/**
 * Structured JSON logger of one unit; every line carries the current request id when there is one.
 *
 * Lines are written to stdout synchronously. pino's default asynchronous destination flushes at
 * exit with a loop that retries a broken pipe every 100 ms for ever (sonic-boom 4), so a unit whose
 * reader had died (a killed launcher) never finished exiting on SIGTERM. A synchronous write meets
 * the broken pipe at once, and pino then drops further lines.
 */
export function createLogger(unit: string, level = "info"): Logger {
  return pino(
    {
      level,
      base: { unit },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: () => {
        const requestId = currentRequestId();
        return requestId ? { request_id: requestId } : {};
      },
    },
    pino.destination({ fd: 1, sync: true }),
  );
}
