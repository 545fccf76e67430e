import type Router from "@koa/router";
import type { Client } from "@connectrpc/connect";
import type { Logger } from "@pgw/kit/runtime";
import type { AccountsService, Operator } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { z } from "zod";
import { parseBody } from "../http/validate";
import { adminActor } from "./admin-auth";

const operatorJson = (o: Operator | undefined) => ({
  id: o?.id,
  name: o?.name,
  created_by: o?.createdBy,
  created_at: o?.createdAt,
  revoked_at: o?.revokedAt ?? null,
});

/**
 * Admin API for operators (docs/operations.md, Operators and credentials), backed by operations'
 * AccountsService. The token is in the answer of a create or a rotation, once, and never again;
 * a rotation or revocation holds at once (the gateway resolves the token on every call). These are
 * the only calls ADMIN_TOKEN reaches outside local mode.
 */
export function operatorsAdminRoutes(router: Router, accounts: Client<typeof AccountsService>, log: Logger): void {
  router.post("/admin/api/operators", async (ctx) => {
    const body = parseBody(z.object({ name: z.string() }), ctx.request.body);
    const { operator, token } = await accounts.createOperator({ name: body.name, createdBy: adminActor(ctx) });
    log.info({ operator_id: operator?.id, name: operator?.name, actor: adminActor(ctx) }, "operator created");
    ctx.status = 201;
    ctx.body = { ...operatorJson(operator), token };
  });

  router.get("/admin/api/operators", async (ctx) => {
    const { operators } = await accounts.listOperators({});
    ctx.body = { operators: operators.map(operatorJson) };
  });

  router.post("/admin/api/operators/:id/token", async (ctx) => {
    const { operator, token } = await accounts.rotateOperatorToken({ operatorId: ctx.params.id });
    log.info({ operator_id: operator?.id, name: operator?.name, actor: adminActor(ctx) }, "operator token rotated");
    ctx.body = { ...operatorJson(operator), token };
  });

  router.post("/admin/api/operators/:id/revoke", async (ctx) => {
    const { operator } = await accounts.revokeOperator({ operatorId: ctx.params.id });
    log.info({ operator_id: operator?.id, name: operator?.name, actor: adminActor(ctx) }, "operator revoked");
    ctx.body = operatorJson(operator);
  });
}
