import { ConnectError } from "@connectrpc/connect";
import type Koa from "koa";
import { AppError, ERROR_HTTP_STATUS, errorBody, type ErrorCode } from "@pgw/contracts";
import { fromConnectError } from "../rpc/connect-errors";
import { currentRequestId, REQUEST_ID_HEADER, withRequestId, type Logger } from "../runtime/logger";
import { requestSpan } from "./request-span";

// Errors thrown by koa-body and Koa itself carry an HTTP status; these are what they mean publicly.
function fromHttpError(err: { status?: number }): AppError | undefined {
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

/** Any thrown value as a public error: AppError as is, a peer's gRPC error decoded, the rest `internal`. */
export function publicError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ConnectError) return fromConnectError(err);
  return fromHttpError(err as { status?: number }) ?? new AppError("internal", "internal error", [], { cause: err });
}

/**
 * The one place where failures become HTTP answers with the error body of docs/architecture.md,
 * Error body (5xx are logged with their cause; the caller only sees the code and message).
 * `statusOf` lets an API with other conventions (the sandbox answers conflicts with 409) keep the
 * same body.
 */
export function errorMiddleware(log: Logger, statusOf: Record<ErrorCode, number> = ERROR_HTTP_STATUS): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const app = publicError(err);
      const status = statusOf[app.code];
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

/**
 * Request id (taken from the caller or made here) for logs and every gRPC hop; one access log line,
 * at info unless a middleware set `ctx.state.accessLogLevel = "debug"` (the gateway does for
 * requests it refuses before authentication, so a flood of them writes no line at info). With
 * tracing on, all of it runs in the request's span (request-span.ts).
 */
export function requestContext(log: Logger): Koa.Middleware {
  const inSpan = requestSpan();
  return (ctx, next) =>
    withRequestId(ctx.get(REQUEST_ID_HEADER), () =>
      inSpan(ctx, async () => {
        const started = process.hrtime.bigint();
        ctx.set(REQUEST_ID_HEADER, currentRequestId()!);
        try {
          await next();
        } finally {
          const ms = Number(process.hrtime.bigint() - started) / 1e6;
          const level = ctx.state.accessLogLevel === "debug" ? "debug" : "info";
          log[level]({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10, shop_id: ctx.state.auth?.shopId }, "http request");
        }
      }),
    );
}
