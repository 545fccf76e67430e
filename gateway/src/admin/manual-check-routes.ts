import type Router from "@koa/router";
import { AppError } from "@pgw/contracts";
import { z } from "zod";
import type { GatewayClients } from "../clients";
import { parseBody } from "../http/validate";
import { adminActor } from "./admin-auth";
import { adminOperationJson } from "./admin-operation";
import { isUuid } from "@pgw/contracts";

/** A manual-check decision, as the admin API and the console take it. */
export const manualCheckDecision = z
  .object({
    decision: z.enum(["approve", "decline"], { error: "must be approve or decline" }),
    actual_amount: z
      .string()
      // Its currency's scale (RUB 2, USDT 6) is checked by operations, which knows the currency.
      .regex(/^(0|[1-9]\d{0,17})(\.\d{1,6})?$/, "must be a positive decimal string")
      .refine((v) => /[1-9]/.test(v), "must be positive")
      .optional(),
    reason: z.string().max(2048, "must be at most 2048 characters").optional(),
  })
  .refine((b) => b.decision === "approve" || b.actual_amount === undefined, { path: ["actual_amount"], message: "only with decision approve" })
  .refine((b) => b.decision !== "approve" || b.actual_amount !== undefined, { path: ["actual_amount"], message: "is required to approve: the amount that arrived" });

/**
 * Admin API for the manual-check queue (docs/architecture.md, Admin API):
 * `POST /admin/api/operations/:id/resolve`
 * `{decision: "approve" | "decline", actual_amount (approve only), reason?}` → 200 with the operation object
 * (its card number masked).
 * approve completes the operation with actual_amount (required: the amount that arrived, never
 * the expected one), decline declines it; operations
 * records who (the signed-in operator) and why. 412 unless the operation is in manual_check, 404 when unknown.
 */
export function manualCheckAdminRoutes(router: Router, clients: Pick<GatewayClients, "operations">): void {
  router.post("/admin/api/operations/:id/resolve", async (ctx) => {
    if (!isUuid(ctx.params.id)) throw new AppError("not_found", "operation not found");
    const body = parseBody(manualCheckDecision, ctx.request.body);
    const { operation } = await clients.operations.resolveManualCheck({
      operationId: ctx.params.id.toLowerCase(),
      decision: body.decision,
      actualAmount: body.actual_amount,
      actor: adminActor(ctx),
      reason: body.reason?.trim() || `manual check ${body.decision}`,
    });
    ctx.body = adminOperationJson(operation!);
  });
}
