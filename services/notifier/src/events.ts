/**
 * What the notifier consumes (it publishes nothing):
 * - `pgw.operation.status_changed.>`: entering awaiting_confirmation or a terminal status creates a
 *   delivery, in the consumer's transaction, with the body fixed at that moment (the operation as
 *   get_operation_state shows it at the transition).
 * - `pgw.accounts.shop_changed`: the shop's webhook URL.
 * Both are idempotent twice over: by event id (the kit's processed_events) and by unique keys
 * (webhook-id; one delivery per operation and status).
 */
import { fromBinary } from "@bufbuild/protobuf";
import { operationStateJson, startConsumer, type ConsumerOptions, type DbClient, type Evidence, type KitLog, type RunningConsumer, isUuid } from "@pgw/kit";
import { OperationStatusChangedSchema, ShopChangedSchema, type OperationStatusChanged, type ShopChanged } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { STATUS_CHANGED_FILTERS } from "@pgw/proto/subjects";
import type { NatsConnection } from "nats";
import type { EvidenceSource } from "./connectors/evidence";
import { rfc3339, webhookBody, webhookIdFor, webhookTypeFor } from "./domain/message";
import { applyShopWebhookUrl, insertDelivery } from "./store";

export const SUBJECTS = {
  // Every change: awaiting_confirmation, not terminal, fires a webhook too.
  statusChanged: STATUS_CHANGED_FILTERS.all,
  shopChanged: "pgw.accounts.shop_changed",
} as const;


/**
 * Durable consumer names. Replicas of one deployment share them (each event goes to one replica);
 * deployments sharing a NATS server (test stacks) are kept apart by NATS_NAMESPACE, which the kit
 * applies to subjects and durables.
 */
export const DURABLES = { status: "notifier-status", shops: "notifier-shops" } as const;

/** A status event the notifier cannot use (no operation snapshot, bad ids): logged and dropped. */
export class UnusableEvent extends Error {}

/** The event's operation id (lowercase), from the event or else its snapshot; empty when neither has one. */
const operationIdOf = (ev: OperationStatusChanged): string => (ev.operationId || ev.operation?.operationId || "").toLowerCase();

/** Decodes a status event; throws UnusableEvent when a webhook could never be built from it. */
export function decodeStatusChanged(data: Uint8Array): OperationStatusChanged {
  const ev = fromBinary(OperationStatusChangedSchema, data);
  const shopId = ev.shopId || ev.operation?.shopId || "";
  const operationId = operationIdOf(ev);
  if (webhookTypeFor(ev.status) && (!ev.operation || !isUuid(shopId) || !isUuid(operationId))) {
    throw new UnusableEvent(`status event ${ev.eventId} for ${operationId || "?"} has no usable operation snapshot`);
  }
  return ev;
}

export interface ConsumerDeps {
  /** The kit's consumer runs each event in a transaction of this client. */
  db: DbClient;
  nc: NatsConnection;
  log: KitLog;
  evidence: EvidenceSource;
}

/**
 * How status changes become deliveries: live from JetStream, and replayed by reconciliation.
 * `concurrency` events at once; one operation's events in order, so its deliveries are created
 * in the order of its statuses.
 */
export function statusConsumerOptions(deps: ConsumerDeps, durable: string, concurrency = 1): ConsumerOptions<OperationStatusChanged, Evidence | null> {
  return {
    nc: deps.nc,
    durable,
    filterSubject: SUBJECTS.statusChanged,
    decode: decodeStatusChanged, // a throw is logged and the message terminated by the kit
    db: deps.db,
    log: deps.log,
    concurrency,
    orderKey: operationIdOf,
    relevant: (ev) => webhookTypeFor(ev.status) !== null,
    // A completed operation's receipts come from the receipts unit, which may first have to ask the
    // provider: asked before the transaction opens, so no connection waits on that call.
    prepare: async (ev) => (ev.status === "completed" ? deps.evidence({ ...ev.operation!, operationId: operationIdOf(ev) }) : null),
    handle: async (tx, ev, meta, evidence) => {
      const type = webhookTypeFor(ev.status);
      if (!type) return;
      const op = ev.operation!;
      const operationId = operationIdOf(ev);
      const webhookId = webhookIdFor(meta.eventId);
      const body = webhookBody(webhookId, type, rfc3339(ev.occurredAt, new Date()), operationStateJson(op, evidence));
      await insertDelivery(tx, { webhookId, shopId: (ev.shopId || op.shopId).toLowerCase(), operationId, eventType: type, payload: body });
    },
  };
}

/** Decodes a shop change; the shop id must be a uuid. */
export function decodeShopChanged(data: Uint8Array): ShopChanged {
  const ev = fromBinary(ShopChangedSchema, data);
  if (!isUuid(ev.shopId)) throw new UnusableEvent(`shop_changed ${ev.eventId} without a shop id`);
  return ev;
}

/** Consumes shop changes into endpoints (the webhook URL per shop). */
export function startShopConsumer(deps: Omit<ConsumerDeps, "evidence">, durable: string): Promise<RunningConsumer> {
  return startConsumer({
    nc: deps.nc,
    durable,
    filterSubject: SUBJECTS.shopChanged,
    decode: decodeShopChanged,
    db: deps.db,
    log: deps.log,
    handle: async (tx, ev) => {
      const occurred = Date.parse(ev.occurredAt);
      await applyShopWebhookUrl(tx, ev.shopId.toLowerCase(), ev.webhookUrl || null, new Date(Number.isNaN(occurred) ? Date.now() : occurred));
    },
  });
}
