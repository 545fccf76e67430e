import type { DescMessage, DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import http from "node:http";
import http2 from "node:http2";
import type net from "node:net";
import type { Registry } from "prom-client";
import { connectDeadlineOf, ConnectExchange, connectRefusalOf } from "./connect-server-exchange";
import { jsonDeserializerOf, jsonSerializerOf } from "./connect-wire";
import { refuseUnstorableText } from "./storable-text";
import type { GrpcTls } from "./grpc-tls";
import { deadlineOf, GrpcExchange, isGrpc, refusalOf } from "./grpc-server-stream";
import { deserializerOf, methodPath, serializerOf } from "./grpc-wire";
import { REQUEST_ID_HEADER, type Logger } from "./logger";
import { answerRefusal, callRunner, type Handler, type Route } from "./rpc-call";
import { createRpcListener } from "./rpc-listener";

/**
 * Where a unit registers its services. Implementations are written against Connect's `ServiceImpl`
 * (requests and answers are protobuf-es messages, failures are thrown), so the same routes also run
 * on Connect's in-memory router transport in tests.
 */
export interface GrpcRouter {
  service<S extends DescService>(service: S, implementation: Partial<ServiceImpl<S>>): unknown;
}

const unimplemented = (service: DescService, method: DescMethod): Handler => () => {
  throw new ConnectError(`${service.typeName}/${method.name} is not implemented`, Code.Unimplemented);
};

/** Bytes that are no message of the method's input type. */
class Undecodable {
  constructor(readonly typeName: string) {}
}

/** Decodes with `strict`; bytes it cannot decode become an Undecodable, which refusingBadInput answers. */
function lenient(strict: (bytes: Buffer) => unknown, schema: DescMessage): (bytes: Buffer) => unknown {
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

/** The routes of one service, by gRPC path (Connect's too). */
function routesOf(service: DescService, impl: Record<string, unknown>): [string, Route][] {
  return service.methods.map((method) => {
    if (method.methodKind !== "unary" && method.methodKind !== "server_streaming") {
      throw new Error(`${service.typeName}/${method.name}: only unary and server-streaming methods are served`);
    }
    const fn = typeof impl[method.localName] === "function" ? (impl[method.localName] as Handler).bind(impl) : unimplemented(service, method);
    const route = {
      service,
      method,
      proto: { decode: lenient(deserializerOf(method.input), method.input), encode: serializerOf(method.output) },
      json: { decode: lenient(jsonDeserializerOf(method.input), method.input), encode: jsonSerializerOf(method.output) },
      handler: refusingBadInput(fn),
    };
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
   * A connection is closed after this long, so clients reconnect and, behind a Kubernetes
   * ClusterIP Service, spread over replicas added since: an HTTP/2 one by GOAWAY (calls in flight
   * get CONNECTION_GRACE_MS to finish), an HTTP/1.1 one by `Connection: close` on its next answer.
   * Default 60 s.
   */
  maxConnectionAgeMs?: number;
  /** Mutual TLS (loadGrpcTls); plaintext (h2c and HTTP/1.1) without it. */
  tls?: GrpcTls | null;
}

const MAX_CONNECTION_AGE_MS = 60_000;
// Longer than any call's deadline (a create may take its 15 s budget plus slack).
const CONNECTION_GRACE_MS = 30_000;
// An idle HTTP/1.1 connection is left for the client to close (the kit's does after
// connect-unary-call.ts's IDLE_MS): a server closing it could race a request being sent on it.
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Closes a connection gracefully (GOAWAY: calls in flight finish, new ones go elsewhere), and for good after `graceMs`. */
function retire(session: http2.ServerHttp2Session, graceMs: number): void {
  if (session.closed || session.destroyed) return;
  session.close();
  setTimeout(() => session.destroy(), graceMs).unref();
}

/** The HTTP/2 connections a server holds, each retired at its maximum age. */
function trackSessions(h2: http2.Http2Server, maxAgeMs: number): Set<http2.ServerHttp2Session> {
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    const aged = setTimeout(() => retire(session, CONNECTION_GRACE_MS), maxAgeMs).unref();
    session.on("close", () => {
      sessions.delete(session);
      clearTimeout(aged);
    });
    session.on("error", () => undefined); // a lost connection: its calls' signals report it
  });
  return sessions;
}

/** The HTTP/1.1 connections a server holds, and which of them have reached their maximum age. */
function trackConnections(h1: http.Server, maxAgeMs: number): { all: Set<net.Socket>; aged: WeakSet<net.Socket> } {
  const all = new Set<net.Socket>();
  const aged = new WeakSet<net.Socket>();
  h1.on("connection", (socket: net.Socket) => {
    all.add(socket);
    const timer = setTimeout(() => aged.add(socket), maxAgeMs).unref();
    socket.once("close", () => {
      all.delete(socket);
      clearTimeout(timer);
    });
  });
  return { all, aged };
}

/**
 * The server of a unit's services on `host`:`port`, on Node's http and http2 (cleartext, or mutual
 * TLS with `options.tls`). On the one port it speaks:
 * - gRPC over HTTP/2, unary and server-streaming, uncompressed, so any gRPC client (grpc-js,
 *   grpc-go, Connect's gRPC transport, grpcurl with the proto files) can call it;
 * - Connect's unary protocol (binary or JSON) over HTTP/1.1, which the kit's own clients use between
 *   units (Node's http2 streams cost V8 full collections on the read path: README, "Benchmarks"),
 *   and over HTTP/2 (an HTTP/2 request that is not gRPC is a Connect one).
 * It replaced @grpc/grpc-js's server, whose per-call layers cost more CPU than the call's own work.
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
  const maxAgeMs = options.maxConnectionAgeMs ?? MAX_CONNECTION_AGE_MS;
  const serveConnect = (exchange: ConnectExchange, method: string | undefined, headers: http.IncomingHttpHeaders, route: Route | undefined) => {
    const refusal = connectRefusalOf(method, headers, route);
    if (refusal) answerRefusal(exchange, refusal);
    else void run(exchange, headers[REQUEST_ID_HEADER] as string | undefined, connectDeadlineOf(headers), route!);
  };
  // maxSessionMemory (MB) must hold a 32 MiB message in flight; the default is 10.
  const h2 = http2.createServer({ maxSessionMemory: 64 });
  const sessions = trackSessions(h2, maxAgeMs);
  h2.on("stream", (stream, headers) => {
    stream.on("error", () => undefined); // a reset by the caller: the call's signal reports it
    const route = table.get(headers[":path"] ?? "");
    if (!isGrpc(headers)) return serveConnect(new ConnectExchange(headers, stream, stream, false), headers[":method"], headers, route);
    const refusal = refusalOf(headers) ?? (route ? null : new ConnectError(`unknown method ${headers[":path"]}`, Code.Unimplemented));
    const exchange = new GrpcExchange(stream);
    if (refusal) answerRefusal(exchange, refusal);
    else void run(exchange, headers[REQUEST_ID_HEADER] as string | undefined, deadlineOf(headers), route!);
  });
  const h1 = http.createServer();
  h1.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  const connections = trackConnections(h1, maxAgeMs);
  let closing = false;
  h1.on("request", (req: http.IncomingMessage, res: http.ServerResponse) =>
    serveConnect(new ConnectExchange(req.headers, req, res, closing || connections.aged.has(req.socket)), req.method, req.headers, table.get(req.url ?? "")),
  );
  const listener = createRpcListener(h2, h1, options.tls ?? null);
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(port, host, () => {
      listener.off("error", reject);
      resolve();
    });
  });
  return {
    port: (listener.address() as net.AddressInfo).port,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        closing = true;
        const timer = setTimeout(() => {
          for (const session of sessions) session.destroy();
          for (const socket of connections.all) socket.destroy();
        }, graceMs);
        listener.close(() => {
          clearTimeout(timer);
          resolve();
        });
        // GOAWAY to each HTTP/2 connection, and every HTTP/1.1 answer from now on says
        // `Connection: close`; the timer above ends whatever has not finished by then.
        for (const session of sessions) session.close();
      }),
  };
}
