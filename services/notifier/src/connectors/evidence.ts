/**
 * Receipt evidence of a completed operation, from the receipts service, for the webhook's
 * `receipts` / `receipt_evidence_status` (the same source get_operation_state uses).
 */
import { createClient } from "@connectrpc/connect";
import { type Evidence } from "@pgw/contracts";
import { type KitLog } from "@pgw/kit/events";
import { createPeerTransport, type GrpcTls } from "@pgw/kit/rpc";
import type { Registry } from "prom-client";
import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { ReceiptsService } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";

/**
 * Evidence of a completed operation (given as the status event's snapshot, so receipts need not
 * read it again), or null when it cannot be had now (the webhook then says `unavailable`).
 */
export type EvidenceSource = (completed: Operation) => Promise<Evidence | null>;

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
