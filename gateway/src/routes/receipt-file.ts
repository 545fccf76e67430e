import type Router from "@koa/router";
import { AppError } from "@pgw/contracts";
import type { GatewayClients } from "../clients";

const INTEGER = /^\d{1,12}$/;
const EXTENSION: Record<string, string> = { "application/pdf": "pdf", "image/jpeg": "jpg", "image/png": "png" };
const INLINE_TYPES = new Set(Object.keys(EXTENSION));

/**
 * GET /v1/receipts/:id/file?expires=&signature=: a receipt file behind a signed 15-minute link
 * (docs/architecture.md, Receipt links). No API key: the signature is the credential, checked by
 * receipts. An altered, expired or malformed link is 404 (nothing is said about which receipts
 * exist).
 */
export function receiptFileRoute(router: Router, clients: GatewayClients): void {
  router.get("/v1/receipts/:id/file", async (ctx) => {
    const expires = String(ctx.query.expires ?? "");
    const signature = String(ctx.query.signature ?? "");
    if (!INTEGER.test(expires) || !/^[0-9a-f]{64}$/i.test(signature)) throw new AppError("not_found", "receipt link is not valid");
    const file = await clients.receipts.getReceiptFile({ itemId: ctx.params.id, expires: BigInt(expires), signature });
    ctx.set("Cache-Control", "private, no-store");
    // Only the receipt types are shown inline; anything else a provider sent is a download, never
    // a page rendered on the gateway's origin.
    const type = INLINE_TYPES.has(file.contentType) ? file.contentType : "application/octet-stream";
    const name = `receipt-${ctx.params.id.replace(/[^A-Za-z0-9-]/g, "")}`;
    ctx.set("Content-Disposition", type === "application/octet-stream" ? `attachment; filename="${name}"` : `inline; filename="${name}.${EXTENSION[type]}"`);
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.set("Content-Security-Policy", "default-src 'none'; sandbox");
    ctx.type = type;
    ctx.body = Buffer.from(file.content);
  });
}
