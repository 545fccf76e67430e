/**
 * Receipt evidence of a completed operation for the webhook's `receipts` /
 * `receipt_evidence_status`: built here from the provider's legs when the status event carries
 * them, by the rules and with the links receipts uses (so it is what get_operation_state shows);
 * otherwise asked of the receipts service, the source get_operation_state reads.
 */
import { createClient } from "@connectrpc/connect";
import { evidenceOfCompletion, presentEvidence, type Evidence } from "@pgw/contracts";
import { type KitLog } from "@pgw/kit/events";
import { createPeerTransport, type GrpcTls } from "@pgw/kit/rpc";
import type { Registry } from "prom-client";
import type { OperationStatusChanged } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { ReceiptsService } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";

/**
 * Evidence of a completed operation (given as the status event's snapshot, so receipts need not
 * read it again, and the event itself), or null when it cannot be had now (the webhook then says
 * `unavailable`).
 */
export type EvidenceSource = (completed: Operation, event: OperationStatusChanged) => Promise<Evidence | null>;

/**
 * Evidence from the provider's legs the event carries, with receipt links under `links` (receipts'
 * origin and key) signed now; from `ask` when the event carries none. Receipts materialises the
 * same legs by the same rule (@pgw/contracts evidenceOfCompletion), so both show the same items;
 * receipts alone reports a leg whose items do not add up.
 */
export function carriedEvidenceSource(links: { baseUrl: string; secret: string }, ask: EvidenceSource): EvidenceSource {
  return async (completed, event) => {
    const carried = evidenceOfCompletion(completed.operationId, event);
    return carried ? presentEvidence(carried.status, carried.items, links, new Date()) : ask(completed, event);
  };
}
/**
 * Asks receipts.GetEvidence with a deadline. Any failure is null. So is `not_ready`: the operation
 * is completed (the only case asked), so "still mutable" can only mean receipts has not caught up.
 */
export function receiptsEvidenceSource(receiptsUrl: string, timeoutMs: number, log: KitLog, tls: GrpcTls | null, registry?: Registry): EvidenceSource {
  const client = createClient(ReceiptsService, createPeerTransport(receiptsUrl, { timeoutMs, tls, registry }));
  return async (completed) => {
    const operationId = completed.operationId;
    try {
      const res = await client.getEvidence({ operationId, completed });
      if (res.status === "not_ready" || res.status === "") return null;
      return {
        status: res.status,
        items: res.items.map((i) => ({ id: i.id, amount: i.amount, completedAt: i.completedAt, receiptUrl: i.receiptUrl })),
      };
    } catch (err) {
      log.warn({ err, operation_id: operationId }, "receipt evidence unavailable; webhook says unavailable");
      return null;
    }
  };
}
