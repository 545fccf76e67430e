import type Router from "@koa/router";
import { AppError } from "@pgw/contracts";
import type { Logger } from "@pgw/kit/runtime";
import type { Operator } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import type Koa from "koa";
import { adminActor } from "../../admin-auth";
import { html, type Html } from "../html";
import { csrfField, notice, shownOnce } from "../layout";
import { done, formOf, render, viewerOf, when, type ConsoleDeps } from "./common";

const NOTICES: Record<string, string> = { revoked: "Operator revoked: their token is refused from now on." };

/** Operators (decision 0013): create one or rotate its token (shown once), revoke one after a confirmation. */
export function operatorPages(router: Router, { clients }: ConsoleDeps, log: Logger): void {
  const operatorsPage = async (ctx: Koa.Context, revealed: Html | "" = "") => {
    const { operators } = await clients.accounts.listOperators({});
    const viewer = viewerOf(ctx);
    const rows = operators.map(
      (o: Operator) => html`<tr><td>${o.name}</td><td>${o.createdBy}</td><td>${when(o.createdAt)}</td><td>${o.revokedAt ? `revoked ${when(o.revokedAt)}` : "active"}</td>
<td>${o.revokedAt ? "" : html`<form method="post" action="/admin/operators/${o.id}/token" class="inline">${csrfField(viewer)}<button class="secondary" aria-label="New token for ${o.name}">New token</button></form>
<a href="/admin/operators/${o.id}/revoke">Revoke</a>`}</td></tr>`,
    );
    render(
      ctx,
      "Operators",
      html`${notice(NOTICES[String(ctx.query.done)])}${revealed}<p>Everyone who signs in has a token of their own; their name is recorded on what they decide.</p>
<table><thead><tr><th scope="col">Name</th><th scope="col">Created by</th><th scope="col">Created</th><th scope="col">State</th><th scope="col"><span class="muted">Actions</span></th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="5">No operators yet.</td></tr>`}</tbody></table>
<h2>New operator</h2><form method="post" action="/admin/operators">${csrfField(viewer)}<label><span>Operator name</span><input name="name" required maxlength="200"></label><button>Create operator</button></form>`,
      "/admin/operators",
    );
  };

  router.get("/admin/operators", (ctx) => operatorsPage(ctx));

  router.post("/admin/operators", async (ctx) => {
    const { operator, token } = await clients.accounts.createOperator({ name: formOf(ctx).name ?? "", createdBy: adminActor(ctx) });
    log.info({ operator_id: operator?.id, name: operator?.name, actor: adminActor(ctx) }, "operator created");
    ctx.status = 201;
    await operatorsPage(ctx, shownOnce("revealed-token", `Token of ${operator!.name}`, token));
  });

  router.post("/admin/operators/:id/token", async (ctx) => {
    const { operator, token } = await clients.accounts.rotateOperatorToken({ operatorId: ctx.params.id });
    log.info({ operator_id: operator?.id, name: operator?.name, actor: adminActor(ctx) }, "operator token rotated");
    await operatorsPage(ctx, shownOnce("revealed-token", `New token of ${operator!.name} (the old one is refused from now on)`, token));
  });

  router.get("/admin/operators/:id/revoke", async (ctx) => {
    const operator = (await clients.accounts.listOperators({})).operators.find((o) => o.id === ctx.params.id && !o.revokedAt);
    if (!operator) throw new AppError("not_found", "no active operator has this id");
    render(
      ctx,
      `Revoke ${operator.name}?`,
      html`<p>${operator.name} will be signed out everywhere at once and cannot sign in again with this token.</p>
<form method="post" action="/admin/operators/${operator.id}/revoke">${csrfField(viewerOf(ctx))}<button class="danger">Revoke ${operator.name}</button> <a href="/admin/operators">Keep them</a></form>`,
      "/admin/operators",
    );
  });

  router.post("/admin/operators/:id/revoke", async (ctx) => {
    const { operator } = await clients.accounts.revokeOperator({ operatorId: ctx.params.id });
    log.info({ operator_id: operator?.id, name: operator?.name, actor: adminActor(ctx) }, "operator revoked");
    done(ctx, "/admin/operators", "revoked");
  });
}
