import { errorBody } from "@pgw/contracts";
import type Koa from "koa";
import { setTimeout as sleep } from "node:timers/promises";
import type { Scenario } from "../domain/scenario";
import type { SandboxDeps } from "./deps";

/** Waits `ms`, or less when `signal` aborts; never throws. */
async function wait(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch(() => undefined);
}

/** A signal that aborts when the client of `ctx` goes away before an answer. */
function clientGone(ctx: Koa.Context): AbortSignal {
  const gone = new AbortController();
  ctx.res.once("close", () => gone.abort());
  return gone.signal;
}

/**
 * Plays the scenario's accept mode before a create goes on: `reject` answers 422
 * `{"error":"rejected"}`; `timeout` holds the request for `holdMs` (or until the client leaves or
 * the sandbox stops) and then answers 504; `accept` waits `accept_delay_ms` first. Answers true when
 * the create may go on, false when the request has been answered here.
 */
export async function playAcceptance(ctx: Koa.Context, scenario: Scenario, deps: SandboxDeps): Promise<boolean> {
  if (scenario.accept === "reject") {
    ctx.status = 422;
    ctx.body = { error: "rejected" };
    return false;
  }
  if (scenario.accept === "timeout") {
    await wait(deps.holdMs, AbortSignal.any([deps.shutdown, clientGone(ctx)]));
    ctx.status = 504;
    ctx.body = errorBody("unavailable", "provider did not answer in time");
    return false;
  }
  if (scenario.acceptDelayMs > 0) await wait(scenario.acceptDelayMs, deps.shutdown);
  return true;
}
