import type Koa from "koa";

/**
 * Content-Security-Policy of the gateway's two HTML pages. Neither loads anything from elsewhere,
 * neither may be framed (the checkout's upload and the console's buttons would be clickjackable).
 * The console runs its own inline script and calls the admin API on its origin; the checkout page
 * runs only its own script and stylesheet, served as files from its origin (no inline code at all),
 * and asks its origin for the payment's status.
 */
const POLICIES = {
  checkout: "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  console: "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
} as const;

/** Sets the security headers of an HTML page the gateway serves. */
export function setPageSecurityHeaders(ctx: Koa.Context, page: keyof typeof POLICIES): void {
  ctx.set("Content-Security-Policy", POLICIES[page]);
  ctx.set("X-Frame-Options", "DENY");
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("Referrer-Policy", "no-referrer");
}
