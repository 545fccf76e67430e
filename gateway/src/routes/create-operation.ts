import type Router from "@koa/router";
import type Koa from "koa";
import { OperationType } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { Principal } from "../auth/key-cache";
import type { GatewayClients } from "../clients";
import { jsonBody } from "../http/json-body";
import { jsonObject, readStringFields } from "../http/json-fields";
import { CREATE_REQUEST_FIELDS, operationJson } from "@pgw/contracts";

export interface CreateRouteOptions {
  /** Prefix of payment_url: PAYMENT_PAGE_HOST + "/" + operation_id. */
  paymentPageHost: string;
  /** Deadline of the whole create call (the service waits up to 15 s for a provider). */
  createTimeoutMs: number;
}

/**
 * POST /v1/payment, /v1/payment/link and /v1/payout: scope from the key, rules in operations, which
 * is also told the fields that were not strings, so its refusal names them beside every other bad field.
 */
export function createOperationRoutes(router: Router, clients: GatewayClients, options: CreateRouteOptions): void {
  const create = async (ctx: Koa.Context, type: OperationType, withLink: boolean) => {
    const { shopId, merchantId } = ctx.state.auth as Principal;
    const { values: f, wronglyTyped } = readStringFields(jsonObject(ctx.request.body), CREATE_REQUEST_FIELDS);
    const res = await clients.operations.createOperation(
      {
        shopId,
        merchantId,
        type,
        merchantOperationId: f.merchant_operation_id ?? "",
        clientId: f.client_id ?? "",
        clientIp: f.client_ip,
        method: f.method ?? "",
        amount: f.amount ?? "",
        currency: f.currency ?? "",
        number: f.number,
        name: f.name,
        bankname: f.bankname,
        // Operations starts nothing it could not answer in time (a request it reads late).
        respondByUnixMs: BigInt(Date.now() + options.createTimeoutMs),
        wronglyTypedFields: wronglyTyped,
      },
      { timeoutMs: options.createTimeoutMs },
    );
    const body = operationJson(res.operation!);
    if (withLink) body.payment_url = res.checkoutEnabled ? `${options.paymentPageHost}/${res.operation!.operationId}` : null;
    ctx.body = body;
  };
  router.post("/v1/payment", jsonBody(CREATE_REQUEST_FIELDS), (ctx) => create(ctx, OperationType.PAYMENT, false));
  router.post("/v1/payment/link", jsonBody(CREATE_REQUEST_FIELDS), (ctx) => create(ctx, OperationType.PAYMENT, true));
  router.post("/v1/payout", jsonBody(CREATE_REQUEST_FIELDS), (ctx) => create(ctx, OperationType.PAYOUT, false));
}
