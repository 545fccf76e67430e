import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { errorBody } from "@pgw/contracts";
import { createHttpServer, sendJson } from "./http-server";
import { registerReadiness } from "./readiness-metrics";

/** A named dependency check for /readyz and /healthz; it must answer within its own timeout and never throw. */
export type ReadinessCheck = () => Promise<boolean>;

export interface ProbeState {
  /** False once shutdown has begun, so Kubernetes stops routing here before the drain. */
  accepting: boolean;
  checks: Record<string, ReadinessCheck>;
}

/** Runs every readiness check; answers which failed. */
export async function failingChecks(state: ProbeState): Promise<string[]> {
  if (!state.accepting) return ["shutting_down"];
  const names = Object.keys(state.checks);
  const results = await Promise.all(names.map((name) => state.checks[name]().catch(() => false)));
  return names.filter((_, i) => !results[i]);
}

/** Probes answered from the readiness checks: the unit can serve (spec: /healthz) and may get traffic (/readyz). */
const SERVING_PROBES = new Set(["/healthz", "/readyz"]);

/**
 * Answers Kubernetes probes: /livez (process up: liveness, so a lost dependency never restarts the
 * unit), /healthz and /readyz (the same checks: dependencies reachable, not shutting down),
 * /metrics (Prometheus text). Returns the handler so the gateway can mount it on its public port too.
 */
export function probeHandler(state: ProbeState, registry?: Registry): HttpHandler {
  return async (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    if (path === "/livez") {
      res.writeHead(204).end();
      return true;
    }
    if (SERVING_PROBES.has(path)) {
      const failing = await failingChecks(state);
      if (failing.length === 0) res.writeHead(204).end();
      else sendJson(res, 503, notReadyBody(failing), { "x-failing-checks": failing.join(",") });
      return true;
    }
    if (path === "/metrics" && registry) {
      res.writeHead(200, { "content-type": registry.contentType }).end(await registry.metrics());
      return true;
    }
    return false;
  };
}

/** A 503 from /readyz or /healthz says which checks failed, in the error body as well as the header. */
function notReadyBody(failing: string[]) {
  return errorBody(
    "unavailable",
    "not ready",
    failing.map((check) => ({ field: check, issue: "is failing" })),
  );
}

/** Handles one HTTP request; resolves false when the request is not its business. */
export type HttpHandler = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean>;

/** The small HTTP/1.1 port every unit opens for probes and metrics (`unit_ready` among them) and `extra` routes, if any. */
export async function startProbeServer(port: number, host: string, state: ProbeState, registry: Registry, extra?: HttpHandler): Promise<http.Server> {
  registerReadiness(registry, state);
  const handle = probeHandler(state, registry);
  const server = createHttpServer((req, res) => {
    handle(req, res)
      .then((handled) => handled || (extra ? extra(req, res) : false))
      .then((handled) => {
        if (!handled) sendJson(res, 404, errorBody("not_found", "not found"));
      })
      .catch(() => sendJson(res, 500, errorBody("internal", "internal error")));
  });
  await listen(server, port, host);
  return server;
}

/** Listens on `host`:`port` and resolves to the port once bound (rejects on EADDRINUSE and the like). */
export function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
