import { AppError } from "@pgw/contracts";
import type Koa from "koa";
import { addressBucket, clientAddress, type TrustedProxies } from "./client-address";
import { RateLimiter } from "./rate-limiter";

/** One attempt's token from its client address's bucket. */
export interface Attempt {
  /** The client address (after TRUSTED_PROXIES), for logs. */
  address: string;
  /** The attempt authenticated: its token goes back, so only failures count. */
  succeeded(): void;
}

export interface ClientAttemptsOptions {
  trustedProxies: TrustedProxies;
  /** Tokens back per second, and the bucket's size. */
  perSecond: number;
  burst: number;
  /** The 429's message. */
  message: string;
  now?: () => number;
}

/**
 * Attempts to authenticate, limited per client address (an IPv6 client per /64). An attempt takes
 * a token before anything is checked, so attempts in flight at once cannot overdraw the bucket,
 * and gives it back once it authenticates: only attempts that did not prove valid use the budget
 * up (a lookup that failed because operations did counts too, which bounds what a flood costs an
 * operations already in trouble). With no token left the attempt is refused with 429
 * `rate_limited` and `Retry-After`, unchecked.
 */
export class ClientAttempts {
  private readonly buckets: RateLimiter;

  constructor(private readonly options: ClientAttemptsOptions) {
    this.buckets = new RateLimiter(options.now);
  }

  take(ctx: Koa.Context): Attempt {
    const address = clientAddress(ctx.req.socket.remoteAddress, ctx.get("x-forwarded-for"), this.options.trustedProxies);
    const bucket = addressBucket(address);
    const decision = this.buckets.take(bucket, this.options.perSecond, this.options.burst);
    if (!decision.allowed) {
      ctx.set("Retry-After", String(decision.retryAfterSeconds));
      throw new AppError("rate_limited", this.options.message);
    }
    return { address, succeeded: () => this.buckets.giveBack(bucket) };
  }
}
