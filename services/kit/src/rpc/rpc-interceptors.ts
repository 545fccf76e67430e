import { Code, ConnectError, createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { Histogram, type Registry } from "prom-client";
import { toConnectError } from "./connect-errors";
import { RPC_SECONDS_BUCKETS, rpcMethodLabel } from "./rpc-metrics";
import { acceptedRequestId, currentRequestId, REQUEST_ID_HEADER, withRequestId, type Logger } from "../runtime/logger";
import { refuseUnstorableText } from "@pgw/contracts";
import { tracingServerInterceptors } from "./rpc-tracing";

/**
 * What the kit adds to Connect's server and clients, as Connect's own interceptors and request gate
 * (rpc-server.ts, peer-transport.ts). Server interceptors apply in this order, outermost first:
 * the request id, then measuring and logging, then the caller's authorisation (under mutual TLS),
 * then public error mapping, then refusal of text Postgres cannot store. Each also follows a streaming answer (Health.Watch, reflection) to its end.
 */

/** The request id of a call on this server, chosen by requestIdGate. */
const REQUEST_ID = createContextKey<string | undefined>(undefined, { description: REQUEST_ID_HEADER });

/**
 * The router's request gate, run before a request's body is read: the call's request id is the
 * caller's x-request-id, or a new one, and goes back in the answer's headers (a refused call's too).
 */
export function requestIdGate(context: HandlerContext): void {
  const id = acceptedRequestId(context.requestHeader.get(REQUEST_ID_HEADER));
  context.values.set(REQUEST_ID, id);
  context.responseHeader.set(REQUEST_ID_HEADER, id);
}

/** Runs the handler with the call's request id current, so every log line of the call carries it. */
const inRequestContext: Interceptor = (next) => (req) => {
  const id = req.contextValues.get(REQUEST_ID);
  return withRequestId(id, async () => {
    const res = await next(req);
    // A stream's handler runs as the library pulls messages from it, outside this function.
    return res.stream ? { ...res, message: pulledWithRequestId(id, res.message) } : res;
  });
};

async function* pulledWithRequestId<T>(id: string | undefined, messages: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = messages[Symbol.asyncIterator]();
  try {
    for (;;) {
      const step = await withRequestId(id, () => iterator.next());
      if (step.done) return;
      yield step.value;
    }
  } finally {
    await iterator.return?.();
  }
}

/** Failures nobody asked for: a bug or a broken dependency, logged with their cause's stack. Every other code is an answer (a refusal, a missing row, a passed deadline). */
const UNEXPECTED = new Set([Code.Internal, Code.Unknown, Code.DataLoss]);

/**
 * Measures every call in `grpc_server_handling_seconds{method, code}` and logs it: a debug line
 * when it succeeds; when it fails, an error line with the cause and its stack if the failure was
 * unexpected, else an info line with the code and the public message only.
 */
function observed(log: Logger, registry: Registry): Interceptor {
  const duration = new Histogram({
    name: "grpc_server_handling_seconds",
    help: "RPC handling time (gRPC, gRPC-Web and Connect) by method and code",
    labelNames: ["method", "code"],
    buckets: RPC_SECONDS_BUCKETS,
    registers: [registry],
  });
  return (next) => async (req) => {
    const method = rpcMethodLabel(req);
    const started = process.hrtime.bigint();
    const ended = (err?: unknown) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (err === undefined) {
        duration.observe({ method, code: "ok" }, seconds);
        if (!req.service.typeName.startsWith("grpc.")) log.debug({ method, ms: seconds * 1000 }, "rpc ok");
        return;
      }
      const ce = ConnectError.from(err);
      duration.observe({ method, code: String(ce.code) }, seconds);
      if (UNEXPECTED.has(ce.code)) log.error({ method, code: ce.code, message: ce.rawMessage, err: ce.cause ?? err }, "rpc failed");
      else log.info({ method, code: ce.code, message: ce.rawMessage }, "rpc failed");
    };
    try {
      const res = await next(req);
      if (!res.stream) ended();
      return res.stream ? { ...res, message: endingWith(res.message, ended) } : res;
    } catch (err) {
      ended(err);
      throw err;
    }
  };
}

/** `messages`, calling `ended` once after the last one, or with the failure or the caller's cancel. */
async function* endingWith<T>(messages: AsyncIterable<T>, ended: (err?: unknown) => void): AsyncGenerator<T> {
  let outcome: unknown = new ConnectError("the caller cancelled", Code.Canceled);
  try {
    yield* messages;
    outcome = undefined;
  } catch (err) {
    outcome = err;
    throw err;
  } finally {
    ended(outcome);
  }
}

/** Whatever a handler throws leaves as a ConnectError (errors.ts, toConnectError): an AppError keeps its public code as an ErrorInfo detail; anything else is unavailable or internal, without its message. */
const publicErrors: Interceptor = (next) => async (req) => {
  try {
    const res = await next(req);
    return res.stream ? { ...res, message: publicErrorsOf(res.message) } : res;
  } catch (err) {
    throw toConnectError(err);
  }
};

async function* publicErrorsOf<T>(messages: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* messages;
  } catch (err) {
    throw toConnectError(err);
  }
}

/** Refuses, before its handler (and Postgres) sees it, a request holding U+0000 or a lone surrogate in any text field: a validation_error naming each field. */
const refusingUnstorableText: Interceptor = (next) => async (req) => {
  if (!req.stream) refuseUnstorableText(req.message);
  return next(req.stream ? { ...req, message: storableEach(req.message) } : req);
};

async function* storableEach<T>(messages: AsyncIterable<T>): AsyncGenerator<T> {
  for await (const message of messages) {
    refuseUnstorableText(message);
    yield message;
  }
}

/** The interceptors of a unit's RPC server, outermost first; `authorizing` (rpc-access.ts) refuses a call after it is measured and logged, before anything else sees it; the call's span (rpc-tracing.ts, when tracing is on) holds its log lines. */
export const serverInterceptors = (log: Logger, registry: Registry, authorizing?: Interceptor): Interceptor[] => [
  inRequestContext,
  ...tracingServerInterceptors(),
  observed(log, registry),
  ...(authorizing ? [authorizing] : []),
  publicErrors,
  refusingUnstorableText,
];

/** A client's: the current request id travels to the peer as x-request-id, unless the call sets one. */
export const sendingRequestId: Interceptor = (next) => (req) => {
  const id = currentRequestId();
  if (id !== undefined && !req.header.has(REQUEST_ID_HEADER)) req.header.set(REQUEST_ID_HEADER, id);
  return next(req);
};
