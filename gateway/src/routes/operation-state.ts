import type Router from "@koa/router";
import { AppError, operationStateJson } from "@pgw/contracts";
import type { Principal } from "../auth/key-cache";
import type { GatewayClients } from "../clients";
import { jsonBody } from "../http/json-body";
import { jsonObject, stringFields } from "../http/json-fields";
import type { ReceiptEvidence } from "../receipt-evidence";
import type { TerminalOperations } from "../terminal-operations";
import { OPERATION_REF_FIELDS, operationRef } from "./operation-ref";

/**
 * POST /v1/get_operation_state: the operation plus its receipt evidence. Evidence comes from the
 * receipts service once the operation is completed; when it cannot be materialised, a read by
 * operation_id is a 503 and a read by merchant_operation_id answers `unavailable` with no items.
 * An operation this gateway already read in a terminal status is answered without asking operations.
 */
export function operationStateRoute(router: Router, clients: GatewayClients, receiptEvidence: ReceiptEvidence, terminal: TerminalOperations): void {
  router.post("/v1/get_operation_state", jsonBody(OPERATION_REF_FIELDS), async (ctx) => {
    const { shopId } = ctx.state.auth as Principal;
    const ref = operationRef(stringFields(jsonObject(ctx.request.body), OPERATION_REF_FIELDS));
    let operation = terminal.find(shopId, ref.ref);
    if (!operation) {
      operation = (await clients.operations.getOperationState({ shopId, ref })).operation!;
      terminal.keep(shopId, operation);
    }
    const evidence = await receiptEvidence.of(operation);
    if (operation.status === "completed" && (!evidence || evidence.status === "unavailable") && ref.ref.case === "operationId") {
      throw new AppError("unavailable", "receipt evidence could not be materialized; retry with backoff");
    }
    ctx.body = operationStateJson(operation, evidence);
  });
}
