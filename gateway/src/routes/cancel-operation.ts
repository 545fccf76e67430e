import type Router from "@koa/router";
import type { Principal } from "../auth/key-cache";
import type { GatewayClients } from "../clients";
import { jsonBody } from "../http/json-body";
import { jsonObject, stringFields } from "../http/json-fields";
import { operationJson } from "@pgw/contracts";
import { OPERATION_REF_FIELDS, operationRef } from "./operation-ref";

const CANCEL_FIELDS = [...OPERATION_REF_FIELDS, "reason"] as const;

/** POST /v1/cancel_operation: a durable decision; repeats answer the same decision. */
export function cancelOperationRoute(router: Router, clients: GatewayClients, cancelTimeoutMs: number): void {
  router.post("/v1/cancel_operation", jsonBody(CANCEL_FIELDS), async (ctx) => {
    const { shopId } = ctx.state.auth as Principal;
    const fields = stringFields(jsonObject(ctx.request.body), CANCEL_FIELDS);
    const res = await clients.operations.cancelOperation({ shopId, ref: operationRef(fields), reason: fields.reason ?? "" }, { timeoutMs: cancelTimeoutMs });
    ctx.body = { outcome: res.outcome, operation: operationJson(res.operation!) };
  });
}
