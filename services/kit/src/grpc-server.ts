import type { DescMessage, DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { Histogram, type Registry } from "prom-client";
import { toConnectError } from "./errors";
import { refuseUnstorableText } from "./storable-text";
import { serverCredentials, type GrpcTls } from "./grpc-tls";
import { deserializerOf, methodPath, serializerOf, SHARED_GRPC_OPTIONS, statusOf } from "./grpc-wire";
import { REQUEST_ID_HEADER, withRequestId, type Logger } from "./logger";

/**
 * Where a unit registers its services. Implementations are written against Connect's `ServiceImpl`
 * (requests and answers are protobuf-es messages, failures are thrown), so the same routes also run
 * on Connect's in-memory router transport in tests.
 */
export interface GrpcRouter {
  service<S extends DescService>(service: S, implementation: Partial<ServiceImpl<S>>): unknown;
}

type Handler = (request: unknown, context: HandlerContext) => unknown;
type AnyCall = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>;

// A cancel this close to our deadline is the caller's own deadline passing (see callContext).
const DEADLINE_SKEW_MS = 50;

/**
 * The part of Connect's handler context our handlers use: service, method, timeoutMs() and `signal`
 * (aborted when the caller cancels or the deadline passes). The signal is made on first use: most
 * calls never pay for an AbortController.
 */
function callContext(call: AnyCall, service: DescService, method: DescMethod): { context: HandlerContext; done(): void } {
  let controller: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  let finished = false;
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : Number.isFinite(deadline) ? deadline : undefined;
  // grpc-js reports an expired deadline as "cancelled" too, and also fires "cancelled" when the
  // stream closes after a normal answer: a call that has answered is never aborted. The caller's
  // own deadline passes first (ours starts when its request arrives), so a cancel that comes within
  // DEADLINE_SKEW_MS of our deadline is that deadline.
  const abort = () => {
    if (finished || !controller || controller.signal.aborted) return;
    const expired = deadlineMs !== undefined && Date.now() >= deadlineMs - DEADLINE_SKEW_MS;
    controller.abort(expired ? new ConnectError("the deadline passed", Code.DeadlineExceeded) : new ConnectError("the caller cancelled", Code.Canceled));
  };
  const context = {
    service,
    method,
    timeoutMs: () => (deadlineMs === undefined ? undefined : deadlineMs - Date.now()),
    get signal(): AbortSignal {
      if (!controller) {
        controller = new AbortController();
        if (call.cancelled) abort();
        else call.once("cancelled", abort);
        if (deadlineMs !== undefined) timer = setTimeout(abort, Math.max(0, deadlineMs - Date.now()));
      }
      return controller.signal;
    },
  };
  const done = () => {
    finished = true;
    clearTimeout(timer);
    call.removeListener("cancelled", abort);
  };
  return { context: context as unknown as HandlerContext, done };
}

/** Runs every call: request id from metadata, one debug line, latency metric, public error mapping. */
function callRunner(log: Logger, registry: Registry) {
  const duration = new Histogram({
    name: "grpc_server_handling_seconds",
    help: "gRPC handling time by method and code",
    labelNames: ["method", "code"],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers: [registry],
  });
  return <T>(call: AnyCall, service: DescService, method: DescMethod, work: (context: HandlerContext) => Promise<T>): Promise<T> =>
    withRequestId(call.metadata.get(REQUEST_ID_HEADER)[0] as string | undefined, async () => {
      const name = `${service.typeName}/${method.name}`;
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      const { context, done } = callContext(call, service, method);
      try {
        const res = await work(context);
        duration.observe({ method: name, code: "ok" }, seconds());
        if (!service.typeName.startsWith("grpc.health")) log.debug({ method: name, ms: seconds() * 1000 }, "rpc ok");
        return res;
      } catch (err) {
        const ce = toConnectError(err);
        duration.observe({ method: name, code: String(ce.code) }, seconds());
        log[ce.code === Code.Internal ? "error" : "info"]({ method: name, code: ce.code, message: ce.rawMessage, err: ce.cause ?? err }, "rpc failed");
        throw statusOf(ce);
      } finally {
        done();
      }
    });
}

function definitionOf(service: DescService): grpc.ServiceDefinition {
  return Object.fromEntries(
    service.methods.map((m) => [
      m.localName,
      {
        path: methodPath(m),
        originalName: m.name,
        requestStream: m.methodKind === "client_streaming" || m.methodKind === "bidi_streaming",
        responseStream: m.methodKind === "server_streaming" || m.methodKind === "bidi_streaming",
        requestSerialize: serializerOf(m.input),
        requestDeserialize: lenientDeserializerOf(m.input),
        responseSerialize: serializerOf(m.output),
        responseDeserialize: deserializerOf(m.output),
      },
    ]),
  );
}

const unimplemented = (service: DescService, method: DescMethod): Handler => () => {
  throw new ConnectError(`${service.typeName}/${method.name} is not implemented`, Code.Unimplemented);
};

/** Bytes that are no message of the method's input type (grpc-js would answer INTERNAL for them). */
class Undecodable {
  constructor(readonly typeName: string) {}
}

function lenientDeserializerOf(schema: DescMessage): (bytes: Buffer) => unknown {
  const strict = deserializerOf(schema);
  return (bytes) => {
    try {
      return strict(bytes);
    } catch {
      return new Undecodable(schema.typeName);
    }
  };
}

/**
 * Refuses, before its handler (and Postgres) sees it, a request that is not a valid message and
 * one holding U+0000 or a lone surrogate in any text field: bad input is InvalidArgument.
 */
const refusingBadInput = (fn: Handler): Handler => (request, context) => {
  if (request instanceof Undecodable) throw new ConnectError(`the request is not a valid ${request.typeName} message`, Code.InvalidArgument);
  refuseUnstorableText(request);
  return fn(request, context);
};

function handlersOf(service: DescService, impl: Record<string, unknown>, run: ReturnType<typeof callRunner>): grpc.UntypedServiceImplementation {
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const method of service.methods) {
    const fn = refusingBadInput(typeof impl[method.localName] === "function" ? (impl[method.localName] as Handler).bind(impl) : unimplemented(service, method));
    if (method.methodKind === "unary") {
      handlers[method.localName] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) =>
        void run(call, service, method, async (ctx) => fn(call.request, ctx)).then((res) => callback(null, res), (status: grpc.StatusObject) => callback(status));
    } else if (method.methodKind === "server_streaming") {
      handlers[method.localName] = (call: grpc.ServerWritableStream<unknown, unknown>) =>
        void run(call, service, method, async (ctx) => {
          for await (const message of fn(call.request, ctx) as AsyncIterable<unknown>) call.write(message);
        }).then(() => call.end(), (status: grpc.StatusObject) => call.emit("error", status));
    } else {
      throw new Error(`${service.typeName}/${method.name}: only unary and server-streaming methods are served`);
    }
  }
  return handlers;
}

export interface GrpcServer {
  port: number;
  /** Stops accepting, lets in-flight calls finish (up to `graceMs`), then closes every connection. */
  close(graceMs: number): Promise<void>;
}

export interface GrpcServerOptions {
  /**
   * A connection is closed (GOAWAY; calls in flight get CONNECTION_GRACE_MS to finish) after this
   * long, so clients reconnect and, behind a Kubernetes ClusterIP Service, spread over replicas
   * added since. Default 60 s.
   */
  maxConnectionAgeMs?: number;
  /** Mutual TLS (loadGrpcTls); plaintext h2c without it. */
  tls?: GrpcTls | null;
}

const MAX_CONNECTION_AGE_MS = 60_000;
// Longer than any call's deadline (a create may take its 15 s budget plus slack).
const CONNECTION_GRACE_MS = 30_000;

/** A gRPC server (@grpc/grpc-js, HTTP/2 cleartext) on `host`:`port` for the services `routes` registers. */
export async function startGrpcServer(
  port: number,
  host: string,
  routes: (router: GrpcRouter) => void,
  log: Logger,
  registry: Registry,
  options: GrpcServerOptions = {},
): Promise<GrpcServer> {
  const server = new grpc.Server({
    ...SHARED_GRPC_OPTIONS,
    "grpc.max_connection_age_ms": options.maxConnectionAgeMs ?? MAX_CONNECTION_AGE_MS,
    "grpc.max_connection_age_grace_ms": CONNECTION_GRACE_MS,
  });
  const run = callRunner(log, registry);
  routes({ service: (service, impl) => server.addService(definitionOf(service), handlersOf(service, impl as Record<string, unknown>, run)) });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host.includes(":") ? `[${host}]` : host}:${port}`, serverCredentials(options.tls ?? null), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    port: bound,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
