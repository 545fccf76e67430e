/**
 * What receipts consumes: `pgw.operation.status_changed.terminal.completed`. When an operation becomes completed its
 * evidence is materialised from the provider's legs: those the event carries when the provider's
 * completion brought them (no call), else those routing reports when asked. It publishes nothing.
 *
 * Idempotency: the kit records each event id in processed_events, and materialisation itself is
 * write-once (one state row per operation, its items written only with it), so it may also run on
 * demand from GetEvidence concurrently. It runs in the consumer's `prepare` step, before the event is
 * recorded: the write is idempotent and needs no atomicity with the event record, and no
 * connection waits on the provider. When the provider's evidence is down the event is
 * still acknowledged; the next GetEvidence materialises on demand. A replayed event materialises
 * the same way, with or without legs.
 *
 * Reconciliation replays the same events through the same options (jobs/status-reconciliation.ts).
 */
import { fromBinary } from "@bufbuild/protobuf";
import { evidenceOfCompletion } from "@pgw/contracts";
import { startConsumer, type ConsumerOptions, type RunningConsumer } from "@pgw/kit/events";
import { type ServiceDeps } from "@pgw/kit/runtime";
import { OperationStatusChangedSchema, type OperationStatusChanged } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { statusChangedSubject } from "@pgw/proto/subjects";
import type { ReceiptsDeps } from "./handlers/deps";
import { materialise } from "./handlers/evidence";
import { readEvidence, type DB, type Db } from "./store";

/** Only a completed operation has evidence to materialise. */
export const SUBJECTS = { statusChanged: statusChangedSubject("completed") } as const;

/** Durable consumer of status changes (replicas share it; NATS_NAMESPACE separates deployments). */
export const STATUS_DURABLE = "receipts-status";

/** Materialises the evidence of an operation that just completed (unless already done). */
export async function onStatusChanged(deps: ReceiptsDeps, ev: OperationStatusChanged): Promise<void> {
  const op = ev.operation;
  if (ev.status !== "completed" || !op) return;
  const operationId = (ev.operationId || op.operationId).toLowerCase();
  const known = evidenceOfCompletion(operationId, ev);
  // Without the legs, materialising asks routing: a redelivery finds the evidence stored and asks
  // nothing. With them, storing is one write-once statement, so no read goes before it.
  if (!known && (await readEvidence(deps.sql, operationId))) return;
  const answer = await materialise(deps, { operationId, actualAmount: op.actualAmount, updatedAt: op.updatedAt || ev.occurredAt }, known);
  if (answer.status === "unavailable") deps.log.warn({ operation_id: operationId, event_id: ev.eventId }, "evidence left for on-demand materialisation");
}

/** How receipts consumes status changes: live from JetStream, and replayed by reconciliation. */
export function statusConsumerOptions(deps: ReceiptsDeps & { nc: ServiceDeps<Db, DB>["nc"] }): ConsumerOptions<OperationStatusChanged> {
  return {
    nc: deps.nc,
    db: deps.sql,
    log: deps.log,
    durable: STATUS_DURABLE,
    filterSubject: SUBJECTS.statusChanged,
    decode: (data) => fromBinary(OperationStatusChangedSchema, data),
    relevant: (ev) => ev.status === "completed",
    prepare: async (ev) => void (await onStatusChanged(deps, ev)),
  };
}

/** Starts the live consumer (durable `receipts-status`; replicas share it). */
export function startStatusConsumer(deps: ReceiptsDeps & { nc: ServiceDeps<Db, DB>["nc"] }): Promise<RunningConsumer> {
  return startConsumer(statusConsumerOptions(deps));
}
