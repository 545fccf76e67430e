import type { Client } from "@connectrpc/connect";
import { AppError } from "@pgw/contracts";
import { fromConnectError } from "@pgw/kit/rpc";
import { type Logger } from "@pgw/kit/runtime";
import type { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import type Koa from "koa";
import type { AuthRefusals } from "./auth-refusals";
import type { ClientAttempts } from "./client-attempts";
import type { KeyCache, KeySource, Principal } from "./key-cache";
import { KeyHashes } from "./key-hashes";
import type { RateDecision } from "./rate-limiter";
import type { UnknownKeys } from "./unknown-keys";

// Shape of an issued key: "pgw_" + base64url of 32 bytes. Anything else cannot be a key.
const API_KEY_SHAPE = /^pgw_[A-Za-z0-9_-]{43}$/;

export const MISSING_KEY_MESSAGE = "x-api-key header is required";
export const INVALID_KEY_MESSAGE = "invalid api key";
/** The challenge every 401 carries (RFC 9110 §11.6.1 requires one); ApiKey is not a registered scheme. */
export const API_KEY_CHALLENGE = 'ApiKey header="X-API-Key"';

function unauthorized(ctx: Koa.Context, message: string): AppError {
  ctx.set("WWW-Authenticate", API_KEY_CHALLENGE);
  return new AppError("unauthorized", message);
}

export interface AuthDeps {
  accounts: Client<typeof AccountsService>;
  cache: KeyCache;
  /** Keys operations just answered "no such key" for; none kept when absent (`API_KEY_UNKNOWN_TTL_MS` 0). */
  unknownKeys?: UnknownKeys;
  /** API keys' rate limits: KeyRateLimits, held across replicas (a bare RateLimiter in unit tests). */
  limiter: { take(apiKeyId: string, rps: number): RateDecision };
  /** Requests without a valid key, per client address. */
  attempts: ClientAttempts;
  refusals: AuthRefusals;
  apiKeyHashSecret: string;
  log: Logger;
}

/**
 * Authenticates every /v1 request by X-API-Key before any body parsing, fixes its scope
 * (ctx.state.auth) and applies its rate limit: a bucket per key, at its shop's rate (decisions/0023).
 *
 * A key this replica holds in its cache costs nothing more. A refusal that needs no lookup (no key,
 * a malformed one, one operations just answered unknown or revoked for) is always the contract's
 * 401: a 429 would cost as much. A key that must be looked up first takes a token of its client
 * address's budget, given back when the key turns out valid: a flood of made-up keys from one
 * address gets 429 instead of a call to operations each, and another address is not slowed by it.
 */
export function apiKeyAuth({ accounts, cache, unknownKeys, limiter, attempts, refusals, apiKeyHashSecret, log }: AuthDeps): Koa.Middleware {
  const keyHashes = new KeyHashes(apiKeyHashSecret);
  /** Asks operations who a key is; a "no such key" answer is also remembered in `unknownKeys`. */
  const operations: KeySource = {
    async resolve(keyHash) {
      try {
        const res = await accounts.resolveApiKey({ keyHash });
        return { apiKeyId: res.apiKeyId, merchantId: res.merchantId, shopId: res.shopId, rateLimitRps: res.rateLimitRps };
      } catch (err) {
        const app = fromConnectError(err);
        if (app.code !== "not_found") throw app;
        unknownKeys?.set(keyHash, true);
        return undefined;
      }
    },
    refreshFailed: (_keyHash, err) => log.warn({ err }, "background refresh of an api key failed"),
  };

  /** Who the request's key is; throws 401, or 429 when its key must be looked up and its client address has used up its budget. */
  const authenticate = async (ctx: Koa.Context): Promise<Principal> => {
    const header = ctx.req.headers["x-api-key"];
    const token = (Array.isArray(header) ? header[0] : header)?.trim();
    if (!token) throw unauthorized(ctx, MISSING_KEY_MESSAGE);
    const keyHash = API_KEY_SHAPE.test(token) ? keyHashes.of(token) : undefined;
    if (!keyHash || unknownKeys?.has(keyHash)) throw unauthorized(ctx, INVALID_KEY_MESSAGE);
    // A key in the cache costs nothing more (past half its TTL it is refreshed in the background).
    const cached = cache.get(keyHash, operations);
    if (cached) return cached;
    // Requests arriving while the key is being resolved wait for that one call, and take no token
    // of their own: they cost operations nothing, and a merchant's burst after its key left the
    // cache (a restart, a NATS reconnect) would otherwise spend its address's budget.
    const attempt = cache.resolving(keyHash) ? undefined : attempts.take(ctx);
    const principal = await cache.fetch(keyHash, operations);
    if (!principal) throw unauthorized(ctx, INVALID_KEY_MESSAGE);
    attempt?.succeeded();
    return principal;
  };

  return async (ctx, next) => {
    const principal = await authenticate(ctx).catch((err: unknown) => {
      throw refusals.counted("public", ctx, err);
    });
    const rate = limiter.take(principal.apiKeyId, principal.rateLimitRps);
    ctx.set("RateLimit-Limit", String(rate.limit));
    ctx.set("RateLimit-Remaining", String(rate.remaining));
    ctx.set("RateLimit-Reset", String(rate.resetSeconds));
    if (!rate.allowed) {
      ctx.set("Retry-After", String(rate.retryAfterSeconds));
      throw new AppError("rate_limited", "rate limit exceeded");
    }
    ctx.state.auth = principal;
    await next();
  };
}
