import type Router from "@koa/router";
import { AppError, ERROR_HTTP_STATUS, isUuid } from "@pgw/contracts";
import { fromConnectError } from "@pgw/kit/rpc";
import { type Logger } from "@pgw/kit/runtime";
import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type Koa from "koa";
import type { GatewayClients } from "../clients";
import { ASSETS_PATH, type CheckoutAssets } from "../checkout/assets";
import { checkoutHtml, notFoundHtml, type PageContext } from "../checkout/checkout-html";
import { checkoutState, isFinal, uploadProblem } from "../checkout/checkout-view";
import { LANGUAGES, TEXTS, type Language } from "../checkout/translations";
import { setPageSecurityHeaders } from "../http/page-headers";
import { CONFIRM_TIMEOUT_MS, multipartBody, readReceiptUpload, type UploadSpool } from "./confirm-payment";

/** What the checkout routes use. */
export interface CheckoutDeps {
  clients: GatewayClients;
  log: Logger;
  spool: UploadSpool;
  assets: CheckoutAssets;
}

/** The operation behind a checkout link, or null when unknown or the shop has checkout disabled. */
async function checkoutOperation(clients: GatewayClients, operationId: string): Promise<Operation | null> {
  if (!isUuid(operationId)) return null;
  try {
    const res = await clients.operations.getCheckout({ operationId: operationId.toLowerCase() });
    return res.checkoutEnabled && res.operation ? res.operation : null;
  } catch (err) {
    if (fromConnectError(err).code === "not_found") return null;
    throw err;
  }
}

/** The payer's language from Accept-Language (English when none of ours is asked for). */
function payerLanguage(ctx: Koa.Context): Language {
  ctx.vary("Accept-Language");
  return (ctx.acceptsLanguages([...LANGUAGES]) || LANGUAGES[0]) as Language;
}

function html(ctx: Koa.Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = "html";
  ctx.set("Cache-Control", "no-store");
  setPageSecurityHeaders(ctx, "checkout");
  ctx.body = body;
}

/**
 * Hosted checkout (docs/api.md, Hosted checkout), outside /v1 and without an API key (the
 * operation's UUID is the payer's link):
 * - `GET /pay/:operation_id`: the page, in the payer's language;
 * - `GET /pay/:operation_id/status`: what the page's script needs to keep it current;
 * - `POST /pay/:operation_id/receipt`: the receipt form. The upload goes through the same receipts
 *   review as confirm_payment, for the operation's own shop; success redirects back to the page, a
 *   refusal shows the page with the reason in the payer's words and the error's status code;
 * - `GET /pay/assets/<name>`: the page's script and stylesheet, named by content hash.
 */
export function checkoutPageRoutes(router: Router, { clients, log, spool, assets }: CheckoutDeps): Router {
  const context = (ctx: Koa.Context): PageContext => ({ language: payerLanguage(ctx), assets });

  router.get(`${ASSETS_PATH}/:name`, (ctx) => {
    const asset = assets.byName.get(ctx.params.name);
    if (!asset) throw new AppError("not_found", "no such checkout asset");
    ctx.type = asset.contentType;
    ctx.set("Cache-Control", "public, max-age=31536000, immutable");
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.body = asset.body;
  });

  router.get("/pay/:operationId", async (ctx) => {
    const op = await checkoutOperation(clients, ctx.params.operationId);
    html(ctx, op ? 200 : 404, op ? checkoutHtml(op, context(ctx)) : notFoundHtml(context(ctx)));
  });

  router.get("/pay/:operationId/status", async (ctx) => {
    const op = await checkoutOperation(clients, ctx.params.operationId);
    if (!op) throw new AppError("not_found", "payment not found");
    const { title, message } = TEXTS[payerLanguage(ctx)].states[checkoutState(op.status)];
    ctx.set("Cache-Control", "no-store");
    ctx.body = { status: op.status, title, message, final: isFinal(op.status) };
  });

  // Parsed inside the route, after the lookup: an unknown operation is 404 whatever the upload, and a
  // refused upload (too large, malformed) is shown on the page like any other refusal.
  const parseUpload = multipartBody(spool);
  router.post("/pay/:operationId/receipt", async (ctx) => {
    const op = await checkoutOperation(clients, ctx.params.operationId);
    if (!op) return html(ctx, 404, notFoundHtml(context(ctx)));
    try {
      await parseUpload(ctx, async () => {
        const upload = await readReceiptUpload(ctx, []);
        await clients.receipts.uploadConfirmation(
          { shopId: op.shopId, operationId: op.operationId, confirmationType: "receipt", filename: upload.filename, contentType: upload.contentType, content: upload.content },
          { timeoutMs: CONFIRM_TIMEOUT_MS },
        );
      });
      ctx.redirect(`/pay/${op.operationId}`);
      ctx.status = 303;
    } catch (err) {
      const app = err instanceof AppError ? err : fromConnectError(err);
      const status = ERROR_HTTP_STATUS[app.code];
      if (status >= 500) log.warn({ err, operation_id: op.operationId }, "checkout receipt upload failed");
      const current = (await checkoutOperation(clients, op.operationId).catch(() => null)) ?? op;
      html(ctx, status, checkoutHtml(current, context(ctx), uploadProblem(app.code, app.details)));
    }
  });
  return router;
}
