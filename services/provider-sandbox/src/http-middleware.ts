import { ERROR_HTTP_STATUS, errorMiddleware, type ErrorCode, type Logger } from "@pgw/kit";
import type Koa from "koa";

/**
 * HTTP status per error code on the sandbox's API: the gateway's table (DESIGN.md §7), except that
 * a provider answers a state or idempotency conflict with 409.
 */
export const SANDBOX_HTTP_STATUS: Record<ErrorCode, number> = { ...ERROR_HTTP_STATUS, invalid_state: 409, idempotency_conflict: 409 };

/** The kit's error middleware with the sandbox's status table. */
export const sandboxErrors = (log: Logger): Koa.Middleware => errorMiddleware(log, SANDBOX_HTTP_STATUS);
