/** Connector of the provider sandbox (services/provider-sandbox): its HTTP API and signed callbacks. */
import { constantTimeEqual, hmacHex } from "@pgw/contracts";
import { ZodError } from "zod";
import { CallbackRejected, ProviderError, type ProviderConnector, type ProviderEndpoint } from "../connector";
import { ensureOk, jsonOf, send } from "../http";
import { callbackOf, evidenceOf, foundPlacementOf, fundsOf, payinBody, payoutBody, placementOf, statusReportOf } from "./transformers";

/** Header carrying hex HMAC-SHA256 of the raw callback body under the provider's callback secret. */
export const SIGNATURE_HEADER = "x-sandbox-signature";

const url = (p: ProviderEndpoint, path: string) => `${p.baseUrl.replace(/\/+$/, "")}${path}`;
const seg = encodeURIComponent;

/** Calls the sandbox and maps its JSON answer; an answer of the wrong shape is a `failed` call. */
async function call<T>(what: string, target: string, init: { method: string; json?: unknown; signal: AbortSignal }, map: (json: unknown) => T): Promise<T> {
  const answer = ensureOk(await send(target, init), what);
  try {
    return map(jsonOf(answer, what));
  } catch (err) {
    if (err instanceof ZodError) throw new ProviderError("failed", `${what}: unexpected answer from the provider`, answer.status, { cause: err });
    throw err;
  }
}

export const sandboxConnector: ProviderConnector = {
  createPayin: (p, req, signal) => call("create payin", url(p, "/api/v1/payins"), { method: "POST", json: payinBody(req), signal }, placementOf),

  createPayout: (p, req, signal) => call("create payout", url(p, "/api/v1/payouts"), { method: "POST", json: payoutBody(req), signal }, placementOf),

  cancel: (p, reference, signal) => call("cancel", url(p, `/api/v1/operations/${seg(reference)}/cancel`), { method: "POST", json: {}, signal }, () => undefined),

  async placedFor(p, operationId, signal) {
    try {
      return await call("placed for", url(p, `/api/v1/operations?operation_id=${seg(operationId)}`), { method: "GET", signal }, foundPlacementOf);
    } catch (err) {
      if (err instanceof ProviderError && err.failure === "not_found") return null;
      throw err;
    }
  },

  status: (p, reference, signal) => call("status", url(p, `/api/v1/operations/${seg(reference)}`), { method: "GET", signal }, statusReportOf),

  checkFunds: (p, reference, signal) => call("check funds", url(p, `/api/v1/operations/${seg(reference)}/funds`), { method: "GET", signal }, fundsOf),

  getEvidence: (p, reference, signal) => call("evidence", url(p, `/api/v1/operations/${seg(reference)}/evidence`), { method: "GET", signal }, evidenceOf),

  async getEvidenceFile(p, itemId, signal) {
    const answer = ensureOk(await send(url(p, `/api/v1/evidence/${seg(itemId)}/file`), { method: "GET", signal }), "evidence file");
    return { content: new Uint8Array(answer.body), contentType: answer.contentType.split(";")[0].trim() || "application/octet-stream" };
  },

  parseCallback(p, rawBody, headers) {
    const given = headers[SIGNATURE_HEADER];
    const signature = Array.isArray(given) ? given[0] : given;
    if (!signature || !constantTimeEqual(signature.toLowerCase(), hmacHex(p.callbackSecret, rawBody.toString("utf8")))) {
      throw new CallbackRejected("signature", "bad callback signature");
    }
    let json: unknown;
    try {
      json = JSON.parse(rawBody.toString("utf8"));
    } catch {
      throw new CallbackRejected("malformed", "callback body is not JSON");
    }
    try {
      return callbackOf(json);
    } catch (err) {
      throw new CallbackRejected("malformed", err instanceof ZodError ? `callback body: ${err.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}` : "callback body");
    }
  },
};
