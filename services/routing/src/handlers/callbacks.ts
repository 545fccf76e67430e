/**
 * Provider callbacks: `POST /callbacks/<provider code>` on the unit's HTTP port. Verified by the
 * provider's connector (signature over the raw body), recorded (sealed: a provider's body may
 * carry a card number) once per (provider, callback id),
 * applied to the allocation and published as a ProviderUpdate through the outbox, all in one
 * transaction. A completion's update carries the provider's evidence legs when the provider gives
 * them within COMPLETION_EVIDENCE_TIMEOUT_MS, asked before the transaction opens; without them it
 * goes out all the same.
 */
import { errorBody, unstorableText, type ErrorCode } from "@pgw/contracts";
import { type HttpHandler } from "@pgw/kit/http";
import { continuingTrace } from "@pgw/kit/runtime";
import type http from "node:http";
import { CallbackRejected } from "../connectors/connector";
import { statusAfterCallback } from "../domain/allocation";
import { bookableAmount, UNBOOKABLE_COMPLETION } from "../domain/callback";
import { providerUpdateEvent } from "../events";
import { lockAllocationByReference, recordCallback, setAllocationStatus } from "../store";
import { providerOf, type RoutingDeps } from "./deps";
import { evidenceAtCompletion } from "./provider-queries";

/** Largest callback body accepted. */
export const MAX_CALLBACK_BYTES = 64 * 1024;

const PATH = /^\/callbacks\/([^/?]+)\/?$/;

class BodyTooLarge extends Error {}

function reply(res: http.ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  return true;
}

const fail = (res: http.ServerResponse, status: number, code: ErrorCode, message: string) => reply(res, status, errorBody(code, message));

/** Reads the whole body, refusing more than `limit` bytes. */
function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers["content-length"] ?? 0) > limit) return reject(new BodyTooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners("data");
        req.resume();
        reject(new BodyTooLarge());
      } else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** A percent-encoded path segment, or undefined when it is not valid encoding (e.g. `%E0`). */
function decodedSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export function callbackHandler(deps: RoutingDeps): HttpHandler {
  return async (req, res) => {
    const match = PATH.exec((req.url ?? "/").split("?")[0]);
    if (!match) return false;
    if (req.method !== "POST") return fail(res.setHeader("allow", "POST"), 405, "validation_error", "callbacks are POSTed");
    const code = decodedSegment(match[1]);
    try {
      const raw = await readBody(req, MAX_CALLBACK_BYTES);
      const provider = code === undefined ? undefined : await deps.providerByCode(code);
      if (!provider) return fail(res, 404, "not_found", "unknown provider");
      const { endpoint, connector } = providerOf(deps, provider);
      const callback = connector.parseCallback(endpoint, raw, req.headers);
      const badText = unstorableText(callback);
      if (badText.length > 0) throw new CallbackRejected("malformed", `callback field ${badText[0].field} ${badText[0].issue}`);
      // No connection waits on the provider: its evidence is asked before the transaction opens.
      const evidence = callback.status === "completed" ? await evidenceAtCompletion(deps, provider, callback.reference, callback.operationId) : undefined;

      const outcome = await deps.sql.$transaction(async (tx): Promise<"unknown" | "mismatch" | "unbookable" | "duplicate" | "accepted"> => {
        const allocation = await lockAllocationByReference(tx, provider.id, callback.reference);
        if (!allocation) return "unknown";
        if (allocation.operationId !== callback.operationId) return "mismatch";
        // Refused before it is recorded, so the provider's retry with the amount is a new callback.
        const actualAmount = bookableAmount(callback.status, callback.amount, allocation.currency ?? "");
        if (actualAmount === null) return "unbookable";
        // A provider sends no trace context: the callback joins the trace of the Allocate that placed the operation.
        return continuingTrace(allocation.traceparent, "provider callback", { attributes: { "pgw.provider": provider.code, "pgw.provider.status": callback.status } }, async () => {
          const recorded = await recordCallback(tx, {
            providerId: provider.id,
            callbackId: callback.callbackId,
            operationId: callback.operationId,
            status: callback.status,
            body: deps.keys.seal(raw.toString("utf8")),
          });
          if (!recorded) return "duplicate";
          const facts = { operationId: callback.operationId, status: callback.status, actualAmount, occurredAt: callback.occurredAt.toISOString() };
          await setAllocationStatus(tx, allocation, statusAfterCallback(allocation.status, callback.status), (sequence) => providerUpdateEvent({ ...facts, sequence }, evidence));
          return "accepted";
        });
      });
      if (outcome === "unknown") return fail(res, 404, "not_found", "unknown reference");
      if (outcome === "mismatch") return fail(res, 400, "validation_error", "reference and operation_id disagree");
      if (outcome === "unbookable") {
        deps.log.warn({ provider: code, operationId: callback.operationId, callbackId: callback.callbackId, amount: callback.amount }, "provider callback rejected: a completion with no amount to book");
        return fail(res, 400, "validation_error", UNBOOKABLE_COMPLETION);
      }
      deps.log.info({ provider: code, operationId: callback.operationId, callbackId: callback.callbackId, status: callback.status, duplicate: outcome === "duplicate" }, "provider callback");
      return reply(res, 200, { status: outcome });
    } catch (err) {
      if (err instanceof BodyTooLarge) return fail(res.setHeader("connection", "close"), 413, "payload_too_large", `callback body over ${MAX_CALLBACK_BYTES} bytes`);
      if (err instanceof CallbackRejected) {
        deps.log.warn({ provider: code, reason: err.reason, message: err.message }, "provider callback rejected");
        return err.reason === "signature" ? fail(res, 401, "unauthorized", "bad signature") : fail(res, 400, "validation_error", err.message);
      }
      deps.log.error({ provider: code, err }, "provider callback failed");
      return fail(res, 500, "internal", "internal error");
    }
  };
}
