import Router from "@koa/router";
import { notFound, probeHandler, requestContext, type ProbeState } from "@pgw/kit/http";
import { type Logger } from "@pgw/kit/runtime";
import Koa from "koa";
import { koaBody } from "koa-body";
import type { Registry } from "prom-client";
import { sandboxErrors } from "./errors";

/**
 * The sandbox provider's HTTP app: probes on its own port (it is an external provider stand-in, not
 * a gRPC service). The provider API and the control API (docs/architecture.md, Provider sandbox
 * control API) mount on `router`.
 */
export function createApp(state: ProbeState, registry: Registry, router: Router, log: Logger): Koa {
  const app = new Koa();
  const probes = probeHandler(state, registry);
  app.use(async (ctx, next) => {
    if (await probes(ctx.req, ctx.res)) {
      ctx.respond = false;
      return;
    }
    await next();
  });
  app.use(requestContext(log));
  app.use(sandboxErrors(log));
  app.use(koaBody({ json: true, multipart: false, urlencoded: false, text: false, jsonLimit: "64kb", jsonStrict: false }));
  app.use(router.routes()).use(router.allowedMethods());
  app.use(notFound);
  return app;
}
