import Router from "@koa/router";
import type { Logger } from "@pgw/kit";
import Koa from "koa";
import type http from "node:http";
import { apiKeyAuth, type AuthDeps } from "./auth/api-key-auth";
import type { GatewayClients } from "./clients";
import { errorMiddleware, notFound } from "./http/errors";
import { jsonBody } from "./http/json-body";
import { requestContext } from "./http/request-context";
import { balancesRoute } from "./routes/balances";

export interface PublicAppDeps extends AuthDeps {
  log: Logger;
  clients: GatewayClients;
  /** Kubernetes probes, also answered on the public port (spec: Health probes). */
  probes: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean>;
}

const PROBE_PATHS = new Set(["/livez", "/healthz", "/readyz"]);
const isV1 = (path: string) => path === "/v1" || path.startsWith("/v1/");

/** The merchant API: probes, then X-API-Key authentication, then body parsing, then the /v1 routes. */
export function createPublicApp(deps: PublicAppDeps): Koa {
  const app = new Koa();
  app.use(async (ctx, next) => {
    if (PROBE_PATHS.has(ctx.path) && (await deps.probes(ctx.req, ctx.res))) {
      ctx.respond = false;
      return;
    }
    await next();
  });
  app.use(requestContext(deps.log));
  app.use(errorMiddleware(deps.log));

  // Every /v1 path, known or not, is authenticated first: an unauthenticated caller learns nothing.
  const authenticate = apiKeyAuth(deps);
  app.use((ctx, next) => (isV1(ctx.path) ? authenticate(ctx, next) : next()));

  const v1 = new Router();
  v1.use(jsonBody());
  balancesRoute(v1, deps.clients.ledger);
  app.use(v1.routes());
  app.use(notFound);
  return app;
}
