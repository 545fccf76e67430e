import { ERROR_HTTP_STATUS, type ErrorCode } from "@pgw/contracts";
import { errorMiddleware } from "@pgw/kit/http";
import { type Logger } from "@pgw/kit/runtime";
import type Koa from "koa";

/**
 * HTTP status per error code on the sandbox's provider API (what routing calls): the gateway's
 * table (docs/architecture.md, Error codes), except that a provider answers a state or idempotency
 * conflict with 409.
 */
export const PROVIDER_HTTP_STATUS: Record<ErrorCode, number> = { ...ERROR_HTTP_STATUS, invalid_state: 409, idempotency_conflict: 409 };

/**
 * The kit's error middleware: the control API (ours: docs/architecture.md, Provider sandbox control
 * API) answers with the public table, as every API of ours does (invalid_state 412); the provider
 * API with the provider's.
 */
export const sandboxErrors = (log: Logger): Koa.Middleware => {
  const control = errorMiddleware(log);
  const provider = errorMiddleware(log, PROVIDER_HTTP_STATUS);
  return (ctx, next) => (ctx.path.startsWith("/control/") ? control : provider)(ctx, next);
};
