import { AppError, constantTimeEqual } from "@pgw/kit";
import type Koa from "koa";

/** Who acts: the `X-Admin-Actor` header (trimmed, at most 200 characters), else `admin`. */
export function adminActor(ctx: Koa.Context): string {
  return ctx.get("x-admin-actor").trim().slice(0, 200) || "admin";
}

/** Admin API guard: `Authorization: Bearer <ADMIN_TOKEN>` (the scheme in any case, RFC 7235), compared in constant time. */
export function adminAuth(adminToken: string): Koa.Middleware {
  return async (ctx, next) => {
    const match = /^Bearer (.+)$/i.exec(ctx.get("authorization"));
    if (!match || !constantTimeEqual(match[1], adminToken)) {
      ctx.set("WWW-Authenticate", 'Bearer realm="admin"');
      throw new AppError("unauthorized", "admin token required");
    }
    await next();
  };
}
