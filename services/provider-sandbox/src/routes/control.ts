import type Router from "@koa/router";
import { METHODS } from "../domain/methods";
import { ACCEPT_MODES, defaultScenario, EVIDENCE_MODES } from "../domain/scenario";
import { applyEvent } from "./lifecycle";
import { BodyReader, parse } from "./body";
import type { SandboxDeps } from "./deps";
import { byOperationId } from "./lookup";
import { controlAnswer, scenarioView } from "./wire";

/** Longest accept delay a scenario may ask for. */
const MAX_DELAY_MS = 120_000;
/** Longest requisites lifetime a scenario may ask for (30 days). */
const MAX_EXPIRES_IN_S = 30 * 24 * 3600;

/** Every method's scenario in force. */
async function allScenarios(deps: SandboxDeps) {
  return { scenarios: (await Promise.all(METHODS.map((m) => deps.store.scenario(m)))).map(scenarioView) };
}

/** Control API for tests and demos, never exposed publicly (docs/architecture.md, Provider sandbox control API). */
export function mountControlRoutes(router: Router, deps: SandboxDeps): void {
  router.post("/control/operations/:operationId/pay", async (ctx) => {
    const body = new BodyReader(ctx.request.body ?? {});
    const amount = body.required("amount", parse.paidAmount);
    const legs = body.optional("legs", parse.paidAmounts);
    body.done();
    const { operation, callback } = await applyEvent(deps, await byOperationId(deps, ctx.params.operationId), "pay", { amount, legs });
    ctx.body = controlAnswer(operation, callback);
  });

  router.post("/control/operations/:operationId/settle", async (ctx) => {
    const body = new BodyReader(ctx.request.body ?? {});
    const legs = body.optional("legs", parse.paidAmounts);
    body.done();
    const { operation, callback } = await applyEvent(deps, await byOperationId(deps, ctx.params.operationId), "settle", { legs });
    ctx.body = controlAnswer(operation, callback);
  });

  for (const event of ["decline", "expire"] as const) {
    router.post(`/control/operations/:operationId/${event}`, async (ctx) => {
      const { operation, callback } = await applyEvent(deps, await byOperationId(deps, ctx.params.operationId), event);
      ctx.body = controlAnswer(operation, callback);
    });
  }

  // Replaces the method's scenario; fields left out take the default.
  router.put("/control/scenario", async (ctx) => {
    const body = new BodyReader(ctx.request.body);
    const method = body.required("method", parse.oneOf(METHODS));
    const base = defaultScenario(method);
    const scenario = {
      method,
      accept: body.required("accept", parse.oneOf(ACCEPT_MODES)),
      acceptDelayMs: body.optional("accept_delay_ms", parse.int(0, MAX_DELAY_MS)) ?? base.acceptDelayMs,
      requiresReceipt: body.optional("requires_receipt", parse.bool) ?? base.requiresReceipt,
      evidence: body.optional("evidence", parse.oneOf(EVIDENCE_MODES)) ?? base.evidence,
      expiresInS: body.optional("expires_in_s", parse.int(1, MAX_EXPIRES_IN_S)) ?? base.expiresInS,
    };
    body.done();
    ctx.body = scenarioView(await deps.store.putScenario(scenario));
  });

  router.get("/control/scenario", async (ctx) => {
    ctx.body = await allScenarios(deps);
  });

  router.delete("/control/scenario", async (ctx) => {
    await deps.store.resetScenarios();
    ctx.body = await allScenarios(deps);
  });
}
