import Router from "@koa/router";
import Koa from "koa";
import type { KeyCache } from "../auth/key-cache";
import type { GatewayClients } from "../clients";
import { errorMiddleware, notFound, requestContext } from "@pgw/kit/http";
import { jsonBody } from "../http/json-body";
import { ROUTER_OPTIONS } from "../http/router-options";
import { adminAuth, type AdminAuthDeps } from "./admin-auth";
import { accountsAdminRoutes } from "./accounts-routes";
import { consoleAwareNotFound } from "./console/errors";
import { consoleRoutes } from "./console/routes";
import { lateFundsAdminRoutes } from "./late-funds-routes";
import { directoryAdminRoutes } from "./directory-routes";
import { ledgerAdminRoutes } from "./ledger-routes";
import { manualCheckAdminRoutes } from "./manual-check-routes";
import { operationAdminRoutes } from "./operation-routes";
import { operatorsAdminRoutes } from "./operators-routes";
import { overviewAdminRoutes } from "./overview-routes";
import { webhookAdminRoutes } from "./webhook-routes";

export interface AdminAppDeps extends Omit<AdminAuthDeps, "accounts"> {
  clients: GatewayClients;
  keyCache: KeyCache;
  /** PAYMENT_PAGE_HOST: the console links a payment to its hosted checkout. */
  paymentPageHost: string;
}

/** The admin port: the JSON admin API behind operator tokens (and ADMIN_TOKEN) and the server-rendered console beside it. */
export function createAdminApp(deps: AdminAppDeps): Koa {
  const app = new Koa();
  app.use(requestContext(deps.log));
  app.use(errorMiddleware(deps.log));

  const authenticate = adminAuth({ ...deps, accounts: deps.clients.accounts });
  app.use((ctx, next) => (ctx.path === "/" ? ctx.redirect("/admin") : next()));
  app.use(consoleRoutes({ clients: deps.clients, keyCache: deps.keyCache, paymentPageHost: deps.paymentPageHost, authenticate, localMode: deps.localMode, log: deps.log }).routes());

  // Lower case, like the public API's check: no spelling of the path may reach the API unauthenticated.
  app.use((ctx, next) => (ctx.path.toLowerCase().startsWith("/admin/api") ? authenticate(ctx, next) : next()));
  const api = new Router(ROUTER_OPTIONS);
  // Answers carry API keys and webhook secrets (shown once): no cache may keep them.
  api.use((ctx, next) => (ctx.set("Cache-Control", "no-store"), next()));
  api.use(jsonBody());
  accountsAdminRoutes(api, deps.clients, deps.keyCache, deps.log);
  ledgerAdminRoutes(api, deps.clients);
  manualCheckAdminRoutes(api, deps.clients);
  lateFundsAdminRoutes(api, deps.clients);
  webhookAdminRoutes(api, deps.clients);
  overviewAdminRoutes(api, deps.clients);
  directoryAdminRoutes(api, deps.clients);
  operationAdminRoutes(api, deps.clients);
  operatorsAdminRoutes(api, deps.clients.accounts, deps.log);
  app.use(api.routes());
  app.use(consoleAwareNotFound);
  app.use(notFound);
  return app;
}
