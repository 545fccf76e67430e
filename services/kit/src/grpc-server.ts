import type { DescMessage, DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import http2 from "node:http2";
import { Histogram, type Registry } from "prom-client";
import { toConnectError } from "./errors";
import { refuseUnstorableText } from "./storable-text";
import type { GrpcTls } from "./grpc-tls";
import { deadlineOf, readMessage, refusalOf, Reply } from "./grpc-server-stream";
import { deserializerOf, methodPath, serializerOf } from "./grpc-wire";
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

/** One method as the server runs it. */
interface Route {
  service: DescService;
  method: DescMethod;
  decode: (bytes: Buffer) => unknown;
  encode: (value: unknown) => Buffer;
  handler: Handler;
}

// A cancel this close to our deadline is the caller's own deadline passing (see CallContext).
const DEADLINE_SKEW_MS = 50;

/**
 * The part of Connect's handler context our handlers use: service, method, timeoutMs() and `signal`
 * (aborted when the caller cancels or the deadline passes). The signal is made on first use: most
 * calls never pay for an AbortController. A class, so `signal` is one getter on the prototype: a
 * getter in an object literal is a new closure per call, which V8 gives a hidden class of its own,
 * in the old generation, keeping the call's objects alive past young-generation collections.
 */
class CallContext {
  readonly service: DescService;
  readonly method: DescMethod;
  private controller: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;

  constructor(
    private readonly stream: http2.ServerHttp2Stream,
    private readonly deadlineMs: number | undefined,
    route: Route,
  ) {
    this.service = route.service;
    this.method = route.method;
  }

  timeoutMs(): number | undefined {
    return this.deadlineMs === undefined ? undefined : this.deadlineMs - Date.now();
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.stream.closed || this.stream.destroyed) this.closed();
      else this.stream.once("close", this.closed);
      if (this.deadlineMs !== undefined) this.timer = setTimeout(() => this.abort(new ConnectError("the deadline passed", Code.DeadlineExceeded)), Math.max(0, this.deadlineMs - Date.now()));
    }
    return this.controller.signal;
  }

  /** The call is answered: nothing aborts its signal any more. */
  done(): void {
    this.finished = true;
    clearTimeout(this.timer);
    this.stream.removeListener("close", this.closed);
  }

  // The caller's own deadline passes first (ours starts when its request arrives), and it resets
  // the stream: a reset within DEADLINE_SKEW_MS of our deadline is that deadline.
  private readonly closed = () => {
    const expired = this.deadlineMs !== undefined && Date.now() >= this.deadlineMs - DEADLINE_SKEW_MS;
    this.abort(expired ? new ConnectError("the deadline passed", Code.DeadlineExceeded) : new ConnectError("the caller cancelled", Code.Canceled));
  };

  private abort(reason: ConnectError): void {
    if (!this.finished && this.controller && !this.controller.signal.aborted) this.controller.abort(reason);
  }
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
  return (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, route: Route): Promise<void> =>
    withRequestId(headers[REQUEST_ID_HEADER] as string | undefined, async () => {
      const name = `${route.service.typeName}/${route.method.name}`;
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      const reply = new Reply(stream);
      const call = new CallContext(stream, deadlineOf(headers), route);
      const context = call as unknown as HandlerContext;
      try {
        const request = route.decode(await readMessage(stream));
        const answer = await route.handler(request, context);
        if (route.method.methodKind === "unary") reply.send(route.encode(answer));
        else for await (const message of answer as AsyncIterable<unknown>) reply.send(route.encode(message));
        call.done();
        reply.end();
        duration.observe({ method: name, code: "ok" }, seconds());
        if (!route.service.typeName.startsWith("grpc.health")) log.debug({ method: name, ms: seconds() * 1000 }, "rpc ok");
      } catch (err) {
        call.done();
        const ce = toConnectError(err);
        reply.end(ce);
        duration.observe({ method: name, code: String(ce.code) }, seconds());
        log[ce.code === Code.Internal ? "error" : "info"]({ method: name, code: ce.code, message: ce.rawMessage, err: ce.cause ?? err }, "rpc failed");
      }
    });
}

const unimplemented = (service: DescService, method: DescMethod): Handler => () => {
  throw new ConnectError(`${service.typeName}/${method.name} is not implemented`, Code.Unimplemented);
};

/** Bytes that are no message of the method's input type. */
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

/** The routes of one service, by gRPC path. */
function routesOf(service: DescService, impl: Record<string, unknown>): [string, Route][] {
  return service.methods.map((method) => {
    if (method.methodKind !== "unary" && method.methodKind !== "server_streaming") {
      throw new Error(`${service.typeName}/${method.name}: only unary and server-streaming methods are served`);
    }
    const fn = typeof impl[method.localName] === "function" ? (impl[method.localName] as Handler).bind(impl) : unimplemented(service, method);
    const route = { service, method, decode: lenientDeserializerOf(method.input), encode: serializerOf(method.output), handler: refusingBadInput(fn) };
    return [methodPath(method), route];
  });
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

/** Closes a connection gracefully (GOAWAY: calls in flight finish, new ones go elsewhere), and for good after `graceMs`. */
function retire(session: http2.ServerHttp2Session, graceMs: number): void {
  if (session.closed || session.destroyed) return;
  session.close();
  setTimeout(() => session.destroy(), graceMs).unref();
}

/**
 * A gRPC server on Node's http2 (cleartext h2c, or mutual TLS with `options.tls`) on `host`:`port`
 * for the services `routes` registers. It speaks gRPC over HTTP/2 for unary and server-streaming
 * methods, uncompressed, so any gRPC client (grpc-js, grpc-go, Connect's gRPC transport, grpcurl
 * with the proto files) can call it. It replaced @grpc/grpc-js's server, whose per-call layers cost
 * more CPU than the call's own work on the edge's read path (README, "Benchmark").
 */
export async function startGrpcServer(
  port: number,
  host: string,
  routes: (router: GrpcRouter) => void,
  log: Logger,
  registry: Registry,
  options: GrpcServerOptions = {},
): Promise<GrpcServer> {
  const table = new Map<string, Route>();
  routes({ service: (service, impl) => routesOf(service, impl as Record<string, unknown>).forEach(([path, route]) => table.set(path, route)) });
  const run = callRunner(log, registry);
  const tls = options.tls;
  // maxSessionMemory (MB) must hold a 32 MiB message in flight; the default is 10.
  const settings = { maxSessionMemory: 64 };
  const server = tls ? http2.createSecureServer({ ...settings, ca: tls.ca, cert: tls.cert, key: tls.key, requestCert: true, rejectUnauthorized: true }) : http2.createServer(settings);
  const sessions = new Set<http2.ServerHttp2Session>();
  const maxAgeMs = options.maxConnectionAgeMs ?? MAX_CONNECTION_AGE_MS;
  server.on("session", (session) => {
    sessions.add(session);
    const aged = setTimeout(() => retire(session, CONNECTION_GRACE_MS), maxAgeMs).unref();
    session.on("close", () => {
      sessions.delete(session);
      clearTimeout(aged);
    });
    session.on("error", () => undefined); // a lost connection: its calls' signals report it
  });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => undefined); // a reset by the caller: the call's signal reports it
    const refusal = refusalOf(headers);
    const route = table.get(headers[":path"] ?? "");
    if (refusal && !(refusal instanceof ConnectError)) new Reply(stream).refuse(refusal.httpStatus);
    else if (refusal) new Reply(stream).end(refusal);
    else if (!route) new Reply(stream).end(new ConnectError(`unknown method ${headers[":path"]}`, Code.Unimplemented));
    else void run(stream, headers, route);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as { port: number }).port,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const session of sessions) session.destroy();
        }, graceMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        // GOAWAY to each; the timer above ends whatever has not finished by then.
        for (const session of sessions) session.close();
      }),
  };
}
