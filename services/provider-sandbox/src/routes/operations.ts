import { AppError, formatExact, isUuid } from "@pgw/contracts";
import type Router from "@koa/router";
import { applyEvent } from "./lifecycle";
import { fundsState } from "../domain/operation-state";
import { renderReceipt } from "../domain/receipt-pdf";
import type { SandboxDeps } from "./deps";
import { byOperationId, byReference } from "./lookup";
import { evidenceView, operationView, statusAnswer } from "./wire";

/** Provider API on an existing operation: read, cancel, funds, evidence and receipt files. */
export function mountOperationRoutes(router: Router, deps: SandboxDeps): void {
  // The operation a create with this operation_id made, if any: how a client whose create timed out
  // learns whether it was placed (404 when not).
  router.get("/api/v1/operations", async (ctx) => {
    ctx.body = operationView(await byOperationId(deps, String(ctx.query.operation_id ?? "")));
  });

  router.get("/api/v1/operations/:reference", async (ctx) => {
    ctx.body = operationView(await byReference(deps, ctx.params.reference));
  });

  // A created operation becomes cancelled (no callback); a finished one answers its status unchanged.
  router.post("/api/v1/operations/:reference/cancel", async (ctx) => {
    const op = await byReference(deps, ctx.params.reference);
    if (op.status !== "created") {
      ctx.body = statusAnswer(op);
      return;
    }
    try {
      ctx.body = statusAnswer((await applyEvent(deps, op, "cancel")).operation);
    } catch (err) {
      if (!(err instanceof AppError && err.code === "invalid_state")) throw err;
      ctx.body = statusAnswer(await byReference(deps, op.reference)); // another change won the race
    }
  });

  // Whether the payer's money arrived; an unknown reference is `not_found` too (200).
  router.get("/api/v1/operations/:reference/funds", async (ctx) => {
    const op = await deps.store.byReference(ctx.params.reference);
    const state = op ? fundsState(op.status) : "not_found";
    ctx.body = state === "arrived" && op?.paidAmount ? { state, amount: formatExact(op.paidAmount) } : { state };
  });

  // Evidence of a paid / settled operation; 503 while the method's scenario says unavailable, and to
  // the first request for an operation paid under `late`.
  router.get("/api/v1/operations/:reference/evidence", async (ctx) => {
    const op = await byReference(deps, ctx.params.reference);
    if ((await deps.store.scenario(op.method)).evidence === "unavailable") throw new AppError("unavailable", "evidence is temporarily unavailable");
    if (op.evidence === "late" && (await deps.store.evidenceFirstAsked(op.reference))) throw new AppError("unavailable", "evidence is not ready yet");
    ctx.body = evidenceView(await deps.store.legs(op.reference));
  });

  router.get("/api/v1/evidence/:itemId/file", async (ctx) => {
    const facts = isUuid(ctx.params.itemId) ? await deps.store.receiptFacts(ctx.params.itemId.toLowerCase()) : null;
    if (!facts) throw new AppError("not_found", "receipt file not found");
    const file = await renderReceipt(facts);
    ctx.type = "application/pdf";
    ctx.set("content-disposition", `inline; filename="receipt-${ctx.params.itemId}.pdf"`);
    ctx.body = file;
  });
}
