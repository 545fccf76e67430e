import { AppError, ERROR_HTTP_STATUS, errorBody, type ErrorCode, type Logger } from "@pgw/kit";
import type Koa from "koa";

/**
 * HTTP status per error code on the sandbox's API: the gateway's table (DESIGN.md §7), except that
 * a provider answers a state or idempotency conflict with 409.
 */
export const SANDBOX_HTTP_STATUS: Record<ErrorCode, number> = { ...ERROR_HTTP_STATUS, invalid_state: 409, idempotency_conflict: 409 };

// Errors thrown by koa-body and Koa carry an HTTP status; these are what they mean on the wire.
function fromHttpError(err: { status?: number }): AppError | undefined {
  if (err.status === 400 || err.status === 422) return new AppError("validation_error", "request body is not valid JSON", [{ field: "body", issue: "must be a JSON object" }]);
  if (err.status === 413) return new AppError("payload_too_large", "request body is too large");
  if (err.status === 415) return new AppError("unsupported_media_type", "unsupported content type");
  return undefined;
}

/** Turns every failure into the kit's error body with the sandbox's status; logs 5xx. */
export function errorMiddleware(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const app = err instanceof AppError ? err : (fromHttpError(err as { status?: number }) ?? new AppError("internal", "internal error", [], { cause: err }));
      const status = SANDBOX_HTTP_STATUS[app.code];
      if (status >= 500) log.error({ err: app.cause ?? app, code: app.code, path: ctx.path }, "request failed");
      if (app.code === "unavailable") ctx.set("Retry-After", "1");
      ctx.status = status;
      ctx.body = errorBody(app.code, app.message, app.details);
    }
  };
}

/** One log line per request, with its request id (from `x-request-id` or a new one). */
export function requestLog(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms) }, "request");
    }
  };
}
