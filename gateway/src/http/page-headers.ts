import type Koa from "koa";

/**
 * Content-Security-Policy of the gateway's two HTML pages. Neither loads anything from elsewhere,
 * neither may be framed (the checkout's upload and the console's buttons would be clickjackable).
 * The console loads its one stylesheet and script from its own origin and posts its forms there;
 * the checkout page runs no script at all.
 */
const POLICIES = {
  checkout: "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  console: "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
} as const;

/** Sets the security headers of an HTML page the gateway serves. */
export function setPageSecurityHeaders(ctx: Koa.Context, page: keyof typeof POLICIES): void {
  ctx.set("Content-Security-Policy", POLICIES[page]);
  ctx.set("X-Frame-Options", "DENY");
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("Referrer-Policy", "no-referrer");
}
