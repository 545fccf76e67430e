import type { ConnectRouter } from "@connectrpc/connect";
import { compressionGzip, connectNodeAdapter } from "@connectrpc/connect-node";
import http from "node:http";
import http2 from "node:http2";
import type net from "node:net";
import type { Registry } from "prom-client";
import type { GrpcTls } from "./grpc-tls";
import type { Logger } from "../runtime/logger";
import { authorizingCallers, callerContextValues, type ServiceAccess, type TeamGrants } from "./rpc-access";
import { requestIdGate, serverInterceptors } from "./rpc-interceptors";
import { createCleartextListener } from "./rpc-listener";
import { registerReflection } from "./rpc-reflection";

/** Largest message either side accepts, compressed or not: a 10 MiB receipt file plus its envelope fits. */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

export interface RpcServer {
  port: number;
  /** Stops accepting, lets calls in flight finish (up to `graceMs`), then closes every connection (their handlers' signals abort). */
  close(graceMs: number): Promise<void>;
}

export interface RpcServerOptions {
  /**
   * A connection is closed after this long, so clients reconnect and, behind a Kubernetes ClusterIP
   * Service, spread over replicas added since: an HTTP/2 one by GOAWAY (calls in flight get
   * CONNECTION_GRACE_MS to finish), an HTTP/1.1 one (aged from its first request) by `Connection:
   * close` on its next answer.
   * Default 60 s.
   */
  maxConnectionAgeMs?: number;
  /** Mutual TLS (loadGrpcTls); cleartext (h2c and HTTP/1.1) without it. */
  tls?: GrpcTls | null;
  /**
   * Under TLS, who may call which method of the routes' services (rpc-access.ts): a call by any other
   * caller is refused with permission_denied. Without it only grpc.* services (health, reflection) answer.
   */
  access?: { services: readonly ServiceAccess[]; grants?: TeamGrants };
}

const MAX_CONNECTION_AGE_MS = 60_000;
// Longer than any call's deadline (a create may take its 15 s budget plus slack).
const CONNECTION_GRACE_MS = 30_000;
// Between the GOAWAY that announces a connection's end and the one that ends it (retire).
const GOAWAY_NOTICE_MS = 1000;
// An idle HTTP/1.1 connection is left for the client to close: a server closing it could race a request being sent on it.
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
// Per HTTP/2 connection, in MB: it must hold a 32 MiB message in flight (Node's default is 10).
const SESSION_MEMORY_MB = 64;
// The highest HTTP/2 stream id: a GOAWAY naming it refuses no stream the client has sent.
const LAST_STREAM_ID = 2 ** 31 - 1;

/**
 * Ends an HTTP/2 connection without failing a call: a first GOAWAY that refuses nothing makes the
 * client open no more streams on it; a second, once streams it sent meanwhile have arrived, closes
 * it when the calls on it finish, and after `graceMs` it is closed whatever runs.
 */
function retire(session: http2.ServerHttp2Session, graceMs: number): void {
  if (session.closed || session.destroyed) return;
  session.goaway(http2.constants.NGHTTP2_NO_ERROR, LAST_STREAM_ID);
  setTimeout(() => session.closed || session.close(), GOAWAY_NOTICE_MS).unref();
  setTimeout(() => session.destroy(), graceMs).unref();
}

/**
 * `router`, refusing options of a service's or method's own: Connect lets them replace the server's
 * (its interceptors, and with them the callers' authorisation) rather than add to them.
 */
function withoutOwnOptions(router: ConnectRouter): ConnectRouter {
  const refuse = () => {
    throw new Error("a service or method registered with options of its own would run without the server's interceptors; set options on the server (rpc-server.ts)");
  };
  const guarded: ConnectRouter = {
    handlers: router.handlers,
    service: (service, implementation, options) => (options ? refuse() : (router.service(service, implementation), guarded)),
    rpc: (method, implementation, options) => (options ? refuse() : (router.rpc(method, implementation), guarded)),
  };
  return guarded;
}

/**
 * A unit's RPC server on `host`:`port`: connect-node's adapter serving Connect, gRPC and gRPC-Web
 * (gzip accepted) for the routes, plus gRPC server reflection, over HTTP/1.1 and HTTP/2 on one port:
 * cleartext (rpc-listener.ts) or mutual TLS with ALPN, where each call's caller is identified by its
 * certificate and authorised per method (rpc-access.ts). What the kit adds per call is in
 * rpc-interceptors.ts; what it adds per connection (ageing, graceful close) is here.
 */
export async function startRpcServer(
  port: number,
  host: string,
  routes: (router: ConnectRouter) => void,
  log: Logger,
  registry: Registry,
  options: RpcServerOptions = {},
): Promise<RpcServer> {
  const adapter = connectNodeAdapter({
    routes: (router) => {
      routes(withoutOwnOptions(router));
      registerReflection(router);
    },
    interceptors: serverInterceptors(log, registry, options.tls ? authorizingCallers(options.access?.services ?? [], options.access?.grants ?? new Map()) : undefined),
    ...(options.tls && { contextValues: callerContextValues }),
    requestGate: requestIdGate,
    acceptCompression: [compressionGzip],
    readMaxBytes: MAX_MESSAGE_BYTES,
    writeMaxBytes: MAX_MESSAGE_BYTES,
  });
  const maxAgeMs = options.maxConnectionAgeMs ?? MAX_CONNECTION_AGE_MS;
  let closing = false;
  // When each HTTP/1.1 connection carried its first request.
  const firstRequestAt = new WeakMap<net.Socket, number>();
  const agedOrClosing = (socket: net.Socket) => {
    const now = Date.now();
    if (!firstRequestAt.has(socket)) firstRequestAt.set(socket, now);
    return closing || now - firstRequestAt.get(socket)! >= maxAgeMs;
  };
  const serve = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    if (res instanceof http.ServerResponse && agedOrClosing(req.socket as net.Socket)) res.setHeader("connection", "close");
    adapter(req, res);
  };

  let h1: http.Server | undefined;
  let listener: net.Server;
  let sessionsOf: http2.Http2Server | http2.Http2SecureServer;
  if (options.tls) {
    const { ca, cert, key } = options.tls;
    const secure = http2.createSecureServer({ ca, cert, key, requestCert: true, rejectUnauthorized: true, allowHTTP1: true, maxSessionMemory: SESSION_MEMORY_MB, noDelay: true }, serve);
    listener = sessionsOf = secure;
  } else {
    const h2 = http2.createServer({ maxSessionMemory: SESSION_MEMORY_MB }, serve);
    h1 = http.createServer(serve);
    h1.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    listener = createCleartextListener(h2, h1);
    sessionsOf = h2;
  }
  const sessions = new Set<http2.ServerHttp2Session>();
  sessionsOf.on("session", (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    const aged = setTimeout(() => retire(session, CONNECTION_GRACE_MS), maxAgeMs).unref();
    session.on("close", () => {
      sessions.delete(session);
      clearTimeout(aged);
    });
    session.on("error", () => undefined); // a lost connection: its calls' signals report it
  });
  const sockets = new Set<net.Socket>();
  listener.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

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
        // A call's connection closing aborts its handler's signal.
        const timer = setTimeout(() => sockets.forEach((socket) => socket.destroy()), graceMs);
        listener.close(() => {
          clearTimeout(timer);
          resolve();
        });
        // Every HTTP/2 connection is retired, every HTTP/1.1 answer from now on says `Connection:
        // close`, idle cleartext HTTP/1.1 connections close now; the timer ends whatever has not finished by then.
        for (const session of sessions) retire(session, graceMs);
        h1?.closeIdleConnections();
      }),
  };
}
