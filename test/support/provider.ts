import { randomUUID } from "node:crypto";
import { signCallback, SIGNATURE_HEADER } from "../../services/provider-sandbox/src/domain/callback";
import { request } from "./http";
import type { Stack } from "./stack";

/**
 * A signed callback about `operationId` sent as the sandbox provider would send it, for what the
 * sandbox itself never sends (money for an operation it knows ended, a completion naming no
 * amount): `fields` are the callback's status and amount, absent ones left out of the body.
 */
export async function providerCallback(stack: Stack, operationId: string, fields: { status: string; amount?: string }) {
  const placement: { reference: string; callbackUrl: string } = await stack.sandbox.db
    .selectFrom("sandboxOperations")
    .select(["reference", "callbackUrl"])
    .where("operationId", "=", operationId)
    .executeTakeFirstOrThrow();
  const body = JSON.stringify({ callback_id: randomUUID(), reference: placement.reference, operation_id: operationId, ...fields, occurred_at: new Date().toISOString() });
  return request(placement.callbackUrl, { method: "POST", headers: { "content-type": "application/json", [SIGNATURE_HEADER]: signCallback("sandbox-callback-secret", body) }, body });
}
