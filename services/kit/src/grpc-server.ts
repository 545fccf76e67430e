import http2 from "node:http2";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Histogram, type Registry } from "prom-client";
import { toConnectError } from "./errors";
import { listen } from "./health-http";
import { REQUEST_ID_HEADER, withRequestId, type Logger } from "./logger";

/** Server interceptor: request id from metadata, one log line per call, latency metric, public error mapping. */
function serverInterceptor(log: Logger, registry: Registry): Interceptor {
  const duration = new Histogram({
    name: "grpc_server_handling_seconds",
    help: "gRPC handling time by method and code",
    labelNames: ["method", "code"],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers: [registry],
  });
  return (next) => (req) =>
    withRequestId(req.header.get(REQUEST_ID_HEADER), async () => {
      const method = `${req.service.typeName}/${req.method.name}`;
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      try {
        const res = await next(req);
        duration.observe({ method, code: "ok" }, seconds());
        if (!req.service.typeName.startsWith("grpc.health")) log.debug({ method, ms: seconds() * 1000 }, "rpc ok");
        return res;
      } catch (err) {
        const ce = toConnectError(err);
        duration.observe({ method, code: String(ce.code) }, seconds());
        const level = ce.code === 13 /* internal */ ? "error" : "info";
        log[level]({ method, code: ce.code, message: ce.rawMessage, err: ce.cause ?? err }, "rpc failed");
        throw ce;
      }
    });
}

export interface GrpcServer {
  port: number;
  /** Stops accepting, lets in-flight calls finish (up to `graceMs`), then closes every session. */
  close(graceMs: number): Promise<void>;
}

/** Connect router served over HTTP/2 cleartext, so plain gRPC clients (grpc-js, grpcurl) work. */
export async function startGrpcServer(
  port: number,
  routes: (router: ConnectRouter) => void,
  log: Logger,
  registry: Registry,
): Promise<GrpcServer> {
  const handler = connectNodeAdapter({ routes, interceptors: [serverInterceptor(log, registry)] });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  const bound = await listen(server, port);
  return {
    port: bound,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => sessions.forEach((s) => s.destroy()), graceMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        sessions.forEach((s) => s.close());
      }),
  };
}
