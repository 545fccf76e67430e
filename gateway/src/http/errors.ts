import { AppError, ERROR_HTTP_STATUS, errorBody, fromConnectError, type Logger } from "@pgw/kit";
import { ConnectError } from "@connectrpc/connect";
import type Koa from "koa";

// Errors thrown by koa-body and Koa itself carry an HTTP status; these are what they mean publicly.
function fromHttpError(err: { status?: number; message?: string }): AppError | undefined {
  switch (err.status) {
    case 400:
    case 422:
      return new AppError("validation_error", "request body is not valid JSON", [{ field: "body", issue: "must be a JSON object" }]);
    case 413:
      return new AppError("payload_too_large", "request body is too large");
    case 415:
      return new AppError("unsupported_media_type", "unsupported content type");
    default:
      return undefined;
  }
}

/** The one place where failures become HTTP answers with the error body of DESIGN.md §7. */
export function errorMiddleware(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const app =
        err instanceof AppError
          ? err
          : err instanceof ConnectError
            ? fromConnectError(err)
            : (fromHttpError(err as { status?: number }) ?? new AppError("internal", "internal error", [], { cause: err }));
      const status = ERROR_HTTP_STATUS[app.code];
      if (status >= 500) log.error({ err: app.cause ?? app, code: app.code, path: ctx.path }, "request failed");
      if (app.code === "unavailable" || app.code === "no_provider_available") ctx.set("Retry-After", "1");
      ctx.status = status;
      ctx.body = errorBody(app.code, app.message, app.details);
    }
  };
}

/** Anything no route answered is a 404 with the error body. */
export const notFound: Koa.Middleware = (ctx) => {
  ctx.status = 404;
  ctx.body = errorBody("not_found", "not found");
};
