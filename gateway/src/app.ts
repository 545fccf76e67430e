import Router from "@koa/router";
import type { Logger } from "@pgw/kit/runtime";
import Koa from "koa";
import type http from "node:http";
import { apiKeyAuth, type AuthDeps } from "./auth/api-key-auth";
import { ROUTER_OPTIONS } from "./http/router-options";
import type { GatewayClients } from "./clients";
import type { GatewayConfig } from "./config";
import { errorMiddleware, notFound, requestContext } from "@pgw/kit/http";
import type { CheckoutAssets } from "./checkout/assets";
import type { ReceiptEvidence } from "./receipt-evidence";
import type { TerminalOperations } from "./terminal-operations";
import { balancesRoute } from "./routes/balances";
import { banksRoute } from "./routes/banks";
import { cancelOperationRoute } from "./routes/cancel-operation";
import { createOperationRoutes } from "./routes/create-operation";
import { operationStateRoute } from "./routes/operation-state";
import { checkoutPageRoutes } from "./routes/checkout-page";
import { confirmPaymentRoute } from "./routes/confirm-payment";
import { receiptFileRoute } from "./routes/receipt-file";
import { openApiDocumentRoute } from "./routes/openapi-document";

export interface PublicAppDeps extends AuthDeps {
  log: Logger;
  clients: GatewayClients;
  config: Pick<GatewayConfig, "PAYMENT_PAGE_HOST" | "CREATE_TIMEOUT_MS" | "CANCEL_TIMEOUT_MS" | "TMPDIR">;
  /** Receipt evidence of completed operations (kept once stored). */
  receiptEvidence: ReceiptEvidence;
  /** Operations already read in a terminal status (they never change). */
  terminalOperations: TerminalOperations;
  /** Kubernetes probes, also answered on the public port (docs/api.md, Probes). */
  probes: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean>;
  /** The OpenAPI document served at GET /openapi.json (docs/openapi.yaml). */
  openApiDocument: object;
  /** The hosted checkout's script and stylesheet. */
  checkoutAssets: CheckoutAssets;
}

const PROBE_PATHS = new Set(["/livez", "/healthz", "/readyz"]);
// Signed receipt links carry their own credential (docs/architecture.md, Receipt links): no API key.
const SIGNED_RECEIPT_LINK = /^\/v1\/receipts\/[^/]+\/file$/;
// Compared in lower case: a route table that matched /V1/… while this check did not would skip authentication.
const needsApiKey = (path: string) => {
  const lower = path.toLowerCase();
  return (lower === "/v1" || lower.startsWith("/v1/")) && !SIGNED_RECEIPT_LINK.test(path);
};

/** The merchant API: probes, then X-API-Key authentication, then body parsing, then the /v1 routes (and, without a key, the checkout page and /openapi.json). */
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
  app.use((ctx, next) => (needsApiKey(ctx.path) ? authenticate(ctx, next) : next()));

  // Each route names its body format: jsonBody() on the JSON routes, multipartBody() on uploads.
  const v1 = new Router(ROUTER_OPTIONS);
  const { clients, config, log } = deps;
  createOperationRoutes(v1, clients, { paymentPageHost: config.PAYMENT_PAGE_HOST, createTimeoutMs: config.CREATE_TIMEOUT_MS });
  operationStateRoute(v1, clients, deps.receiptEvidence, deps.terminalOperations);
  cancelOperationRoute(v1, clients, config.CANCEL_TIMEOUT_MS);
  balancesRoute(v1, clients.ledger);
  banksRoute(v1, clients);
  const spool = { root: config.TMPDIR, log };
  confirmPaymentRoute(v1, clients, deps.receiptEvidence, spool);
  receiptFileRoute(v1, clients);
  app.use(v1.routes());
  app.use(checkoutPageRoutes(new Router(ROUTER_OPTIONS), { clients, log, spool, assets: deps.checkoutAssets }).routes());
  app.use(openApiDocumentRoute(new Router(ROUTER_OPTIONS), deps.openApiDocument).routes());
  app.use(notFound);
  return app;
}
