import { AppError, constantTimeEqual, hmacHex } from "@pgw/contracts";
import type Koa from "koa";
import getRawBody from "raw-body";
import type { Viewer } from "./layout";

/** The console's session cookie: the operator's token itself, HttpOnly, SameSite=Strict, on the console's paths only. */
export const SESSION_COOKIE = "pgw_console";
const FORM_LIMIT_BYTES = 64 * 1024;

/** The token a form of this session carries: an HMAC of a purpose under the session's own secret, which a cross-site page cannot read or make. */
export const csrfOf = (token: string) => hmacHex(token, "console form");

/**
 * Starts a session for `token` (verified by the caller); Secure outside local mode, where TLS ends
 * before the admin port (at the ingress), so the connection Koa sees is plain HTTP and its cookie
 * jar must be told the browser's side is HTTPS.
 */
export function startSession(ctx: Koa.Context, token: string, secure: boolean): void {
  if (secure) ctx.cookies.secure = true;
  ctx.cookies.set(SESSION_COOKIE, token, { httpOnly: true, sameSite: "strict", secure, path: "/admin", overwrite: true });
}

export function endSession(ctx: Koa.Context): void {
  ctx.cookies.set(SESSION_COOKIE, "", { httpOnly: true, sameSite: "strict", path: "/admin", maxAge: 0, overwrite: true });
}

/** The session's token, if there is one. */
export const sessionToken = (ctx: Koa.Context): string | undefined => ctx.cookies.get(SESSION_COOKIE) || undefined;

/** A posted form (application/x-www-form-urlencoded, at most 64 KiB) as plain strings. */
export async function readForm(ctx: Koa.Context): Promise<Record<string, string>> {
  if (!ctx.is("application/x-www-form-urlencoded")) throw new AppError("unsupported_media_type", "the form must be sent as a web form");
  const text = await getRawBody(ctx.req, { limit: FORM_LIMIT_BYTES, encoding: "utf8" }).catch(() => {
    throw new AppError("payload_too_large", "the form is too large");
  });
  return Object.fromEntries(new URLSearchParams(text));
}

/** Refuses a form whose CSRF field is not this session's. */
export function checkCsrf(form: Record<string, string>, viewer: Viewer): void {
  if (!form._csrf || !constantTimeEqual(form._csrf, viewer.csrf)) throw new AppError("validation_error", "this form has expired: reload the page and send it again");
}
