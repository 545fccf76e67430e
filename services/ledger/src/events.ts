/**
 * What the ledger consumes: `pgw.operation.status_changed.terminal.>` (terminal money facts). It publishes
 * nothing. Idempotency has two layers: the kit records each event id in processed_events, and
 * every entry has a unique source (operation id + transition), so even the same fact under a
 * new event id never posts twice.
 */
import { fromBinary } from "@bufbuild/protobuf";
import type { ConsumerOptions, KitLog, startConsumer } from "@pgw/kit/events";
import { OperationStatusChangedSchema, type OperationStatusChanged } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { OperationType } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { STATUS_CHANGED_FILTERS } from "@pgw/proto/subjects";
import { paymentCompletedPostings } from "./domain/flows";
import { GarbageEvent, planStatusChange, type LedgerAction, type OperationSnapshot } from "./domain/status-event";
import type { Db, Tx } from "./store";
import { postEntry, type PostedEntry } from "./store/journal";
import { completePayout, releaseReserve } from "./store/reserves";

/** The ledger books terminal money facts only, so it reads the changes into a terminal status. */
export const SUBJECTS = { statusChanged: STATUS_CHANGED_FILTERS.terminal } as const;

/** Durable consumer of status changes (replicas share it; NATS_NAMESPACE separates deployments). */
export const STATUS_DURABLE = "ledger-status";

/** Wire → domain: the event's operation as the ledger reads it. */
export function snapshotOf(ev: OperationStatusChanged): OperationSnapshot {
  const op = ev.operation;
  const type = op?.type === OperationType.PAYMENT ? "payment" : op?.type === OperationType.PAYOUT ? "payout" : "unknown";
  return {
    operationId: ev.operationId || (op?.operationId ?? ""),
    shopId: ev.shopId || (op?.shopId ?? ""),
    type,
    status: ev.status || (op?.status ?? ""),
    currency: op?.currency ?? "",
    actualAmount: op?.actualAmount ?? "",
    fxRate: op?.fxRate,
    settlementCurrency: op?.settlementCurrency,
    settlementAmount: op?.settlementAmount,
    commissionAmount: op?.commissionAmount,
    recordedAmount: op?.recordedAmount,
    recordedCurrency: op?.recordedCurrency,
  };
}

/** A decoded event and what the ledger will do about it. */
export interface PlannedStatusChange {
  eventId: string;
  action: LedgerAction;
}

/**
 * Decodes and plans an event. An event with unusable figures is logged as an alert and thrown
 * out, so the consumer terminates it instead of retrying it forever.
 */
export function decodeStatusChange(data: Uint8Array, log: KitLog): PlannedStatusChange {
  const ev = fromBinary(OperationStatusChangedSchema, data);
  try {
    return { eventId: ev.eventId, action: planStatusChange(snapshotOf(ev)) };
  } catch (err) {
    if (err instanceof GarbageEvent) {
      log.error({ alert: "ledger_garbage_event", event_id: ev.eventId, operation_id: ev.operationId, status: ev.status, reason: err.message }, "status event with unusable figures; not posted");
    }
    throw err;
  }
}

/** Applies a planned status change inside the consumer's transaction. */
export async function applyStatusChange(tx: Tx, planned: PlannedStatusChange, log: KitLog): Promise<void> {
  const { action } = planned;
  const actor = `event:${planned.eventId}`;
  let posted: PostedEntry | null = null;
  switch (action.kind) {
    case "none":
      return;
    case "payout_released":
      await releaseReserve(tx, action.operationId, { reason: "payout not completed", actor });
      return;
    case "payout_completed":
      posted = await completePayout(tx, action.operationId, action.capture, actor, log);
      break;
    case "payment_completed": {
      const { capture } = action;
      const draft = { source: `complete:${action.operationId}`, kind: "payment_completed", shopId: capture.shopId, reason: "payment completed", actor } as const;
      posted = await postEntry(tx, { ...draft, postings: paymentCompletedPostings(capture) });
      break;
    }
  }
  if (posted && !posted.sameContent) {
    log.error({ alert: "ledger_conflicting_event", operation_id: action.operationId, entry_id: posted.entryId }, "operation completed again with other figures; the first entry stands");
  }
}

/** How the ledger consumes status changes: live from JetStream, and replayed by reconciliation. */
export function statusConsumerOptions(deps: { db: Db; nc: Parameters<typeof startConsumer>[0]["nc"]; log: KitLog }): ConsumerOptions<PlannedStatusChange> {
  return {
    nc: deps.nc,
    db: deps.db,
    log: deps.log,
    durable: STATUS_DURABLE,
    filterSubject: SUBJECTS.statusChanged,
    decode: (data) => decodeStatusChange(data, deps.log),
    relevant: (planned) => planned.action.kind !== "none",
    // The kit runs the handler in `db.$transaction` of the pool given here, so `tx` is that pool's
    // transaction (PgTx); the kit's consumer still types it as its raw-SQL SqlClient.
    handle: (tx, planned, meta) => applyStatusChange(tx as Tx, { ...planned, eventId: planned.eventId || meta.eventId }, deps.log),
  };
}
