import { AppError, constantTimeEqual, type Logger } from "@pgw/kit";
import type Koa from "koa";
import type { AuthRefusals } from "../auth/auth-refusals";
import type { ClientAttempts } from "../auth/client-attempts";

/** Who acts: the `X-Admin-Actor` header (trimmed, at most 200 characters), else `admin`. */
export function adminActor(ctx: Koa.Context): string {
  return ctx.get("x-admin-actor").trim().slice(0, 200) || "admin";
}

export interface AdminAuthDeps {
  adminToken: string;
  /** Failed sign-ins, per client address. */
  attempts: ClientAttempts;
  refusals: AuthRefusals;
  log: Logger;
}

/**
 * Admin API guard: `Authorization: Bearer <ADMIN_TOKEN>` (the scheme in any case, RFC 7235),
 * compared in constant time. Each failure takes a token of its client address's budget and logs a
 * warn line (the address, never what was presented); with the budget used up every sign-in from
 * that address, right or wrong, is 429 until tokens come back, so guessing gets nowhere and a right
 * guess cannot be told from a wrong one.
 */
export function adminAuth({ adminToken, attempts, refusals, log }: AdminAuthDeps): Koa.Middleware {
  const signIn = (ctx: Koa.Context): void => {
    const attempt = attempts.take(ctx);
    const match = /^Bearer (.+)$/i.exec(ctx.get("authorization"));
    if (!match || !constantTimeEqual(match[1], adminToken)) {
      log.warn({ client_address: attempt.address, method: ctx.method, path: ctx.path, credential: match ? "wrong" : "missing" }, "admin sign-in failed");
      ctx.set("WWW-Authenticate", 'Bearer realm="admin"');
      throw new AppError("unauthorized", "admin token required");
    }
    attempt.succeeded();
  };

  return async (ctx, next) => {
    try {
      signIn(ctx);
    } catch (err) {
      throw refusals.counted("admin", ctx, err);
    }
    await next();
  };
}
