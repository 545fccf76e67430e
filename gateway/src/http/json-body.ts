import { AppError, refuseNulText } from "@pgw/kit";
import type Koa from "koa";
import { koaBody } from "koa-body";

/** Largest JSON body accepted (DESIGN.md §7); larger is 413. */
export const JSON_BODY_LIMIT = "64kb";

/**
 * The JSON body parser of a route (mounted after authentication, so nothing is parsed for an
 * unauthenticated call):
 * - a body of another media type is a 415 (DESIGN.md §7); a body sent without a Content-Type is
 *   read as JSON, since JSON is the only format these routes take;
 * - a string holding U+0000 anywhere in the body is a 400 naming its field (kit `refuseNulText`);
 * - an empty body is no body (undefined, which routes with an optional body read as `{}`), not the
 *   empty string koa-body makes of it.
 */
export function jsonBody(): Koa.Middleware {
  const parse = koaBody({ json: true, multipart: false, urlencoded: false, text: false, jsonLimit: JSON_BODY_LIMIT, jsonStrict: false });
  return async (ctx, next) => {
    if (carriesBody(ctx)) {
      if (!ctx.get("content-type")) ctx.req.headers["content-type"] = "application/json";
      else if (!ctx.is("json")) throw new AppError("unsupported_media_type", "the request body must be application/json", [{ field: "content-type", issue: "must be application/json" }]);
    }
    await parse(ctx, async () => {
      if (ctx.request.body === "") ctx.request.body = undefined;
      refuseNulText(ctx.request.body);
      await next();
    });
  };
}

/** Whether the request has a body (chunked, or a non-zero Content-Length). */
function carriesBody(ctx: Koa.Context): boolean {
  return ctx.get("transfer-encoding") !== "" || Number(ctx.get("content-length") || 0) > 0;
}
