import type Router from "@koa/router";
import { AppError, isUuid } from "@pgw/contracts";
import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type Koa from "koa";
import type { GatewayClients } from "../../../clients";
import { parseBody } from "../../../http/validate";
import { adminActor } from "../../admin-auth";
import { lateFundsResolution } from "../../late-funds-routes";
import { manualCheckDecision } from "../../manual-check-routes";
import { html } from "../html";
import { csrfField, notice } from "../layout";
import { done, formOf, render, viewerOf, when, type ConsoleDeps } from "./common";

const NOTICES: Record<string, string> = { resolved: "Decision recorded.", handled: "Recorded as handled." };

/** The approve/decline form of an operation in manual_check: approving needs the amount that arrived. */
export function resolveForm(ctx: Koa.Context, op: Operation) {
  const id = op.operationId.slice(0, 8);
  return html`<form method="post" action="/admin/operations/${op.operationId}/resolve">${csrfField(viewerOf(ctx))}
<fieldset><legend>Decide ${op.merchantOperationId} (${op.manualCheckReason ?? "manual check"})</legend>
<label><span>Decision</span><select name="decision"><option value="approve">Approve</option><option value="decline">Decline</option></select></label>
<label><span>Amount that arrived (${op.currency}, to approve)</span><input name="actual_amount" id="amount-${id}" inputmode="decimal" size="12"></label>
<label><span>Reason</span><input name="reason" maxlength="2048" size="30"></label><button>Record decision</button></fieldset></form>`;
}

/** Records a manual-check decision by the signed-in operator; answers the page to go back to. */
export async function resolveFromForm(ctx: Koa.Context, clients: GatewayClients): Promise<string> {
  if (!isUuid(ctx.params.id)) throw new AppError("not_found", "no operation has this id");
  const form = formOf(ctx);
  // The amount box stays on the form when declining: empty, it is no amount.
  const body = parseBody(manualCheckDecision, { decision: form.decision, actual_amount: form.actual_amount?.trim() || undefined, reason: form.reason });
  await clients.operations.resolveManualCheck({
    operationId: ctx.params.id.toLowerCase(),
    decision: body.decision,
    actualAmount: body.actual_amount,
    actor: adminActor(ctx),
    reason: body.reason?.trim() || `manual check ${body.decision}`,
  });
  return "/admin/manual-checks";
}

/** The manual-check queue and late funds: the two queues operators work through. */
export function queuePages(router: Router, { clients }: ConsoleDeps): void {
  router.get("/admin/manual-checks", async (ctx) => {
    const { operations } = await clients.operations.listOperations({ status: "manual_check", limit: 100 });
    const items = operations.map(
      (op) => html`<section><h2><a href="/admin/operations/${op.operationId}">${op.merchantOperationId}</a></h2>
<p>${op.expectedAmount} ${op.currency} expected · ${op.method} · created ${when(op.createdAt)}</p>${resolveForm(ctx, op)}</section>`,
    );
    render(ctx, "Manual checks", html`${notice(NOTICES[String(ctx.query.done)])}${items.length ? items : html`<p>The queue is empty.</p>`}`, "/admin/manual-checks");
  });

  router.get("/admin/late-funds", async (ctx) => {
    const { lateFunds } = await clients.operations.listLateFunds({ state: "open", limit: 100 });
    const rows = lateFunds.map(
      (f) => html`<tr><td><a href="/admin/operations/${f.operationId}">${f.operationId.slice(0, 8)}…</a></td><td>${f.operationType}, ${f.operationStatus}</td><td>${f.amount} ${f.currency}</td><td>${when(f.reportedAt)}</td>
<td><form method="post" action="/admin/late-funds/${f.id}/resolve">${csrfField(viewerOf(ctx))}<label><span>What was done with the money</span><input name="note" required maxlength="2048"></label><button>Mark handled</button></form></td></tr>`,
    );
    render(
      ctx,
      "Late funds",
      html`${notice(NOTICES[String(ctx.query.done)])}<p>Money a provider reported after its operation had ended: return or book it, then say what was done.</p>
<table><thead><tr><th scope="col">Operation</th><th scope="col">Ended as</th><th scope="col">Amount</th><th scope="col">Reported</th><th scope="col">Resolution</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5">Nothing open.</td></tr>`}</tbody></table>`,
      "/admin/late-funds",
    );
  });

  router.post("/admin/late-funds/:id/resolve", async (ctx) => {
    if (!isUuid(ctx.params.id)) throw new AppError("not_found", "no late funds have this id");
    const { note } = parseBody(lateFundsResolution, formOf(ctx));
    await clients.operations.resolveLateFunds({ id: ctx.params.id, actor: adminActor(ctx), note });
    done(ctx, "/admin/late-funds", "handled");
  });
}
