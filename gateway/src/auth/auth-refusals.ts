import { AppError } from "@pgw/contracts";
import type Koa from "koa";
import { Counter, type Registry } from "prom-client";

/** Which API refused: the public merchant API or the admin API. */
export type AuthApi = "public" | "admin";

/**
 * Requests refused before they were authenticated (401, or 429 for their client address): counted
 * in `gateway_auth_refusals_total{api, code}` and their access line kept at debug, so a flood of
 * them costs a counter increment each, not a log line.
 */
export class AuthRefusals {
  private readonly refusals: Counter<"api" | "code">;

  constructor(registry: Registry) {
    this.refusals = new Counter({
      name: "gateway_auth_refusals_total",
      help: "Requests refused before authentication, by API and public error code (unauthorized, rate_limited)",
      labelNames: ["api", "code"],
      registers: [registry],
    });
  }

  /** Counts `err` when it is such a refusal, and hands it back to be thrown. */
  counted(api: AuthApi, ctx: Koa.Context, err: unknown): unknown {
    if (err instanceof AppError && (err.code === "unauthorized" || err.code === "rate_limited")) {
      this.refusals.inc({ api, code: err.code });
      ctx.state.accessLogLevel = "debug";
    }
    return err;
  }
}
