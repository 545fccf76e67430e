import type Router from "@koa/router";
import { AppError, isUuid, type ErrorDetail } from "@pgw/contracts";
import { OperationType, type Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { OPERATION_STATUSES, timeParam } from "../../operation-routes";
import { operationTimeline } from "../../operation-timeline";
import { pageQuery, refuseBadQuery } from "../../page-query";
import { html } from "../html";
import { done, paged, render, when, type ConsoleDeps } from "./common";
import { resolveForm, resolveFromForm } from "./queues";

const CAUSES: Record<string, string> = {
  allocated: "created: a provider accepted it",
  provider: "the provider reported it",
  receipt_review: "receipt review",
  manual_check: "manual check",
  cancel: "cancelled by the merchant",
};
const text = (value: unknown) => (typeof value === "string" ? value.trim() : "");

const operationRow = (op: Operation) =>
  html`<tr><td><a href="/admin/operations/${op.operationId}">${op.merchantOperationId}</a></td><td>${op.status}</td><td>${op.method}</td><td>${op.expectedAmount} ${op.currency}</td><td>${when(op.createdAt)}</td></tr>`;

/** Operations: search by either id, status, shop and creation dates; one operation with its timeline. */
export function operationPages(router: Router, { clients, paymentPageHost }: ConsoleDeps): void {
  router.get("/admin/operations", async (ctx) => {
    const [q, status, shopId, from, to] = ["q", "status", "shop_id", "from", "to"].map((name) => text(ctx.query[name]));
    if (shopId && !isUuid(shopId)) throw new AppError("validation_error", "the shop must be given by its id");
    // The search form sends its empty boxes too: an empty date is no bound.
    const details: ErrorDetail[] = [];
    const dates = { from: from || undefined, to: to || undefined };
    const createdFrom = timeParam(dates, "from", details);
    const createdTo = timeParam(dates, "to", details);
    const { after, limit } = pageQuery(ctx.query, details);
    refuseBadQuery(details);
    const res = await clients.operations.listOperations({
      query: q || undefined,
      status: OPERATION_STATUSES.has(status) ? status : undefined,
      shopId: shopId || undefined,
      createdFrom,
      createdTo,
      after,
      limit: limit + 1,
    });
    const { items, next } = paged(ctx, res.operations, limit, (op) => ({ createdAt: op.createdAt, id: op.operationId }));
    const options = [...OPERATION_STATUSES].map((s) => html`<option${s === status ? html` selected` : ""}>${s}</option>`);
    render(
      ctx,
      "Operations",
      html`<form method="get" role="search"><label><span>Operation id or merchant operation id</span><input name="q" value="${q}" size="40"></label>
<label><span>Status</span><select name="status"><option value="">any</option>${options}</select></label>
<label><span>Shop id</span><input name="shop_id" value="${shopId}" size="38"></label>
<label><span>Created from</span><input name="from" type="date" value="${from}"></label><label><span>Created to</span><input name="to" type="date" value="${to}"></label>
<button>Search</button></form>
<table><thead><tr><th scope="col">Merchant operation id</th><th scope="col">Status</th><th scope="col">Method</th><th scope="col">Amount</th><th scope="col">Created</th></tr></thead>
<tbody>${items.length ? items.map(operationRow) : html`<tr><td colspan="5">No operations match.</td></tr>`}</tbody></table>${next}`,
      "/admin/operations",
    );
  });

  router.get("/admin/operations/:id", async (ctx) => {
    const { operation: op, statusChanges, deliveries, confirmations } = await operationTimeline(clients, ctx.params.id);
    // The payer's page, as the payer sees it, where the shop offers one.
    const checkout = op.type === OperationType.PAYMENT && (await clients.accounts.getShop({ shopId: op.shopId })).shop?.checkoutEnabled;
    const changes = statusChanges.map(
      (c) => html`<li><strong>${c.fromStatus} → ${c.toStatus}</strong> at ${when(c.at)}: ${CAUSES[c.cause] ?? c.cause}${c.actor ? ` by ${c.actor}` : ""}${c.reason ? ` (${c.reason})` : ""}</li>`,
    );
    const uploads = confirmations.map(
      (c) => html`<li>${when(c.createdAt)}: ${c.filename} (${c.contentType}) → ${c.outcome ?? "not decided"}${c.manualCheckReason ? `, ${c.manualCheckReason}` : ""}
<ul>${c.findings.map((f) => html`<li>${f.code}${f.detail ? `: ${f.detail}` : ""}</li>`)}</ul></li>`,
    );
    const hooks = deliveries.map((d) => html`<li>${when(d.createdAt)}: ${d.eventType}, ${d.status} after ${d.attempts} attempt(s)</li>`);
    render(
      ctx,
      `Operation ${op.merchantOperationId}`,
      html`<dl><dt>Operation id</dt><dd><code>${op.operationId}</code></dd><dt>Shop</dt><dd><a href="/admin/shops/${op.shopId}">${op.shopId}</a></dd>
<dt>Status</dt><dd>${op.status}</dd><dt>Method</dt><dd>${op.method}</dd><dt>Expected amount</dt><dd>${op.expectedAmount} ${op.currency}</dd>
<dt>Actual amount</dt><dd>${op.actualAmount} ${op.currency}</dd><dt>Created</dt><dd>${when(op.createdAt)}</dd>
${checkout ? html`<dt>Hosted checkout</dt><dd><a href="${paymentPageHost}/${op.operationId}">the payer's page</a></dd>` : ""}</dl>
${op.status === "manual_check" ? resolveForm(ctx, op) : ""}
<h2>Timeline</h2><ol>${changes.length ? changes : html`<li>No status change recorded.</li>`}</ol>
<h2>Receipts and review</h2><ul>${uploads.length ? uploads : html`<li>No receipt uploaded.</li>`}</ul>
<h2>Webhook deliveries</h2><ul>${hooks.length ? hooks : html`<li>No webhook sent.</li>`}</ul>`,
      "/admin/operations",
    );
  });

  // The manual-check decision, from the queue or an operation's page.
  router.post("/admin/operations/:id/resolve", async (ctx) => {
    done(ctx, await resolveFromForm(ctx, clients), "resolved");
  });
}
