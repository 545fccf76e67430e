import type { Client } from "@connectrpc/connect";
import { AppError, constantTimeEqual, sha256Hex } from "@pgw/contracts";
import { fromConnectError } from "@pgw/kit/rpc";
import { type Logger } from "@pgw/kit/runtime";
import type { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import type Koa from "koa";
import type { AuthRefusals } from "../auth/auth-refusals";
import type { ClientAttempts } from "../auth/client-attempts";

/** Who signed in to the admin API. */
export interface AdminIdentity {
  /** The actor recorded on what they decide: the operator's name, or `admin` for ADMIN_TOKEN. */
  actor: string;
  /** Signed in with the shared ADMIN_TOKEN rather than an operator token. */
  bootstrap: boolean;
}

const BOOTSTRAP: AdminIdentity = { actor: "admin", bootstrap: true };
// Shape of an operator token: "pgwop_" + base64url of 32 bytes. Anything else is not looked up.
const OPERATOR_TOKEN_SHAPE = /^pgwop_[A-Za-z0-9_-]{43}$/;
// All that ADMIN_TOKEN alone may reach outside local mode: the operators.
const OPERATOR_PATHS = /^\/admin\/api\/operators(\/|$)/;
const CHALLENGE = 'Bearer realm="admin"';

/** The signed-in operator's name (`admin` for ADMIN_TOKEN): the actor recorded on decisions. */
export function adminActor(ctx: Koa.Context): string {
  return (ctx.state.admin as AdminIdentity).actor;
}

export interface AdminAuthDeps {
  adminToken: string;
  /** Local mode lets ADMIN_TOKEN use the whole admin API; elsewhere it only manages operators. */
  localMode: boolean;
  accounts: Client<typeof AccountsService>;
  /** Failed sign-ins, per client address. */
  attempts: ClientAttempts;
  refusals: AuthRefusals;
  log: Logger;
}

/**
 * Admin API guard: `Authorization: Bearer <token>` (the scheme in any case, RFC 7235), where the
 * token is an operator's (resolved at operations by its SHA-256 on every call, so a revocation
 * holds at once everywhere) or the shared ADMIN_TOKEN (compared in constant time), which outside
 * local mode reaches only `/admin/api/operators…`. The identity goes to `ctx.state.admin`.
 *
 * Each failure takes a token of its client address's budget and logs a warn line (the address,
 * never what was presented); with the budget used up every sign-in from that address, right or
 * wrong, is 429 until tokens come back, so guessing gets nowhere and a right guess cannot be told
 * from a wrong one.
 */
export function adminAuth({ adminToken, localMode, accounts, attempts, refusals, log }: AdminAuthDeps): Koa.Middleware {
  /** Whose credential this is; null when it is nobody's (unknown, revoked, malformed). */
  const identify = async (credential: string): Promise<AdminIdentity | null> => {
    if (constantTimeEqual(credential, adminToken)) return BOOTSTRAP;
    if (!OPERATOR_TOKEN_SHAPE.test(credential)) return null;
    try {
      const { operator } = await accounts.resolveOperator({ tokenHash: sha256Hex(credential) });
      return { actor: operator!.name, bootstrap: false };
    } catch (err) {
      const app = fromConnectError(err);
      if (app.code === "not_found") return null;
      throw app;
    }
  };

  const signIn = async (ctx: Koa.Context): Promise<AdminIdentity> => {
    const attempt = attempts.take(ctx);
    const credential = /^Bearer (.+)$/i.exec(ctx.get("authorization"))?.[1];
    const identity = credential ? await identify(credential) : null;
    if (!identity) {
      log.warn({ client_address: attempt.address, method: ctx.method, path: ctx.path, credential: credential ? "wrong" : "missing" }, "admin sign-in failed");
      ctx.set("WWW-Authenticate", CHALLENGE);
      throw new AppError("unauthorized", "an operator token is required");
    }
    attempt.succeeded();
    return identity;
  };

  return async (ctx, next) => {
    const identity = await signIn(ctx).catch((err: unknown) => {
      throw refusals.counted("admin", ctx, err);
    });
    if (identity.bootstrap && !localMode && !OPERATOR_PATHS.test(ctx.path)) {
      log.warn({ method: ctx.method, path: ctx.path }, "admin token used beyond managing operators");
      ctx.set("WWW-Authenticate", CHALLENGE);
      throw new AppError("unauthorized", "outside local mode the admin token only manages operators: sign in with an operator token");
    }
    ctx.state.admin = identity;
    await next();
  };
}
