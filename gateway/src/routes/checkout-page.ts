import type Router from "@koa/router";
import { AppError, ERROR_HTTP_STATUS } from "@pgw/contracts";
import { fromConnectError } from "@pgw/kit/rpc";
import { type Logger } from "@pgw/kit/runtime";
import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type Koa from "koa";
import type { GatewayClients } from "../clients";
import { isUuid } from "@pgw/contracts";
import { CONFIRM_TIMEOUT_MS, multipartBody, readReceiptUpload, type UploadSpool } from "./confirm-payment";
import { setPageSecurityHeaders } from "../http/page-headers";

/** HTML-escapes a value for text and double-quoted attributes. */
export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** How the payer sees a status (docs/api.md, Checkout: paid, under review, declined or expired). */
export function payerStatus(status: string): string {
  switch (status) {
    case "completed":
      return "Paid";
    case "manual_check":
      return "Under review";
    case "declined":
      return "Declined";
    case "expired":
      return "Expired";
    case "cancelled":
      return "Cancelled";
    default:
      return "Awaiting payment";
  }
}

const STYLE = "body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}dt{color:#666}dd{margin:0 0 .75rem;font-size:1.1rem}.error{color:#b00020}";

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;

/** Statuses in which the page still shows where to pay: the payment takes money, or is under review of a transfer made. */
const SHOWS_REQUISITES = new Set(["pending", "awaiting_confirmation", "manual_check"]);

/**
 * The checkout page of an operation: amount, status, the requisites while the payment can take money
 * (a paid, declined, expired or cancelled payment shows none, so nobody pays into it), and the
 * receipt form while one is awaited.
 */
export function checkoutHtml(op: Operation, error?: string): string {
  const row = (label: string, value: string | undefined) => (value ? `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(value)}</dd>` : "");
  const requisites = SHOWS_REQUISITES.has(op.status) ? `${row("Pay to", op.number)}${row("Recipient", op.name)}${row("Bank", op.banknameDetails ?? op.bankname)}` : "";
  const form =
    op.status === "awaiting_confirmation"
      ? `<form method="post" action="/pay/${escapeHtml(op.operationId)}/receipt" enctype="multipart/form-data">` +
        `<p><label>Upload the payment receipt (PDF): <input type="file" name="receipt" accept="application/pdf" required></label></p>` +
        `<p><button type="submit">Send receipt</button></p></form>`
      : "";
  return page(
    "Payment",
    `<h1>Payment</h1>` +
      (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "") +
      `<dl>${row("Amount", `${op.expectedAmount} ${op.currency}`)}${requisites}` +
      `<dt>Status</dt><dd id="status" data-status="${escapeHtml(op.status)}">${escapeHtml(payerStatus(op.status))}</dd></dl>${form}`,
  );
}

const NOT_FOUND_HTML = page("Not found", "<h1>Payment not found</h1><p>This payment link is not valid.</p>");

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

function html(ctx: Koa.Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = "html";
  ctx.set("Cache-Control", "no-store");
  setPageSecurityHeaders(ctx, "checkout");
  ctx.body = body;
}

/**
 * Hosted checkout (docs/architecture.md, Hosted checkout): `GET /pay/:operation_id` and the receipt
 * form's `POST /pay/:operation_id/receipt`, outside /v1 and without an API key (the operation's
 * UUID is the payer's link). The upload goes through the same receipts review as confirm_payment,
 * for the operation's own shop; success redirects back to the page, a refusal shows the page with
 * the reason and the error's status code.
 */
export function checkoutPageRoutes(router: Router, clients: GatewayClients, log: Logger, spool: UploadSpool): Router {
  router.get("/pay/:operationId", async (ctx) => {
    const op = await checkoutOperation(clients, ctx.params.operationId);
    html(ctx, op ? 200 : 404, op ? checkoutHtml(op) : NOT_FOUND_HTML);
  });

  // Parsed inside the route, after the lookup: an unknown operation is 404 whatever the upload, and a
  // refused upload (too large, malformed) is shown on the page like any other refusal.
  const parseUpload = multipartBody(spool);
  router.post("/pay/:operationId/receipt", async (ctx) => {
    const op = await checkoutOperation(clients, ctx.params.operationId);
    if (!op) return html(ctx, 404, NOT_FOUND_HTML);
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
      html(ctx, status, checkoutHtml(current, status >= 500 ? "The receipt could not be checked right now. Please try again in a minute." : app.message));
    }
  });
  return router;
}
