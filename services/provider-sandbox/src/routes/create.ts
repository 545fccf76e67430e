import { AppError } from "@pgw/contracts";
import type Router from "@koa/router";
import type Koa from "koa";
import { createHash, randomBytes } from "node:crypto";
import { METHODS } from "../domain/methods";
import type { OperationKind } from "../domain/operation-state";
import { requisitesFor } from "../domain/requisites";
import { expiryOf, type Scenario } from "../domain/scenario";
import type { NewOperation, StoredOperation } from "../store";
import { playAcceptance } from "./acceptance";
import { BodyReader, parse } from "./body";
import type { SandboxDeps } from "./deps";
import { payinAnswer, statusAnswer } from "./wire";

/** The fields payins and payouts share. */
function readCommon(body: BodyReader) {
  return {
    operationId: body.required("operation_id", parse.uuid),
    method: body.required("method", parse.oneOf(METHODS)),
    amount: body.required("amount", parse.amount),
    currency: body.required("currency", parse.currency),
    callbackUrl: body.required("callback_url", parse.url),
  };
}

type CreateRequest = ReturnType<typeof readCommon>;
/** What a kind adds to a create, given the scenario in force and the time of acceptance. */
type Extras = (scenario: Scenario, now: Date) => Pick<NewOperation, "requisites" | "requiresReceipt" | "expiresAt">;

/** A repeated operation_id must carry the same request (kind, method, amount, currency). */
function sameOrConflict(op: StoredOperation, kind: OperationKind, req: CreateRequest): StoredOperation {
  if (op.kind === kind && op.method === req.method && op.currency === req.currency && op.amount.eq(req.amount)) return op;
  throw new AppError("idempotency_conflict", "operation_id was already used for another request");
}

/**
 * Create flow of both kinds: a repeated operation_id answers the stored operation at once; a new
 * one plays the method's scenario (reject / timeout / delay) and is then inserted (a concurrent
 * duplicate ends on the same row). Under a scenario that accepts at once the insert alone finds a
 * repeat, in one statement. Null when the scenario answered the request itself.
 */
async function create(ctx: Koa.Context, deps: SandboxDeps, kind: OperationKind, req: CreateRequest, extras: Extras) {
  const scenario = await deps.store.scenario(req.method);
  if (scenario.accept !== "accept" || scenario.acceptDelayMs > 0) {
    const existing = await deps.store.byOperationId(req.operationId);
    if (existing) return sameOrConflict(existing, kind, req);
    if (!(await playAcceptance(ctx, scenario, deps))) return null;
  }
  const reference = `sbx_${randomBytes(10).toString("hex")}`;
  const { operation } = await deps.store.create({ ...req, kind, reference, ...extras(scenario, deps.now()) });
  return sameOrConflict(operation, kind, req);
}

/** POST /api/v1/payins and POST /api/v1/payouts. */
export function mountCreateRoutes(router: Router, deps: SandboxDeps): void {
  router.post("/api/v1/payins", async (ctx) => {
    const body = new BodyReader(ctx.request.body);
    const req = readCommon(body);
    body.optional("client_id", parse.anyText);
    body.done();
    const op = await create(ctx, deps, "payin", req, (scenario, now) => ({
      requisites: requisitesFor(req.method, createHash("sha256").update(req.operationId).digest()),
      requiresReceipt: scenario.requiresReceipt,
      expiresAt: expiryOf(scenario, now),
    }));
    if (op) ctx.body = payinAnswer(op);
  });

  router.post("/api/v1/payouts", async (ctx) => {
    const body = new BodyReader(ctx.request.body);
    const req = readCommon(body);
    const dest = body.nested("destination");
    const destination = {
      number: dest.required("number", parse.text),
      name: dest.optional("name", parse.anyText) ?? "",
      bankname: dest.optional("bankname", parse.anyText),
    };
    body.done();
    const op = await create(ctx, deps, "payout", req, () => ({ requisites: destination, requiresReceipt: false, expiresAt: null }));
    if (op) ctx.body = statusAnswer(op);
  });
}
