/**
 * What the notifier consumes (it publishes nothing):
 * - the status changes that fire a webhook (STATUS_CONSUMERS): entering awaiting_confirmation or a
 *   terminal status creates a delivery, in the consumer's transaction, with the body fixed at that
 *   moment (the operation as get_operation_state shows it at the transition). The event's snapshot
 *   has no `number`: it travels sealed beside it, and is opened with the unit's data keys (asked of
 *   operations only when the event has none or this unit cannot open it).
 * - `pgw.accounts.shop_changed`: the shop's webhook URL.
 * Both are idempotent twice over: by event id (the kit's processed_events) and by unique keys
 * (webhook-id; one delivery per operation and status).
 */
import { fromBinary } from "@bufbuild/protobuf";
import { operationStateJson, type Evidence, isUuid } from "@pgw/contracts";
import { SealedValueError, type DataKeys } from "@pgw/kit/db";
import { startConsumer, type ConsumerOptions, type KitLog, type RunningConsumer } from "@pgw/kit/events";
import { OperationStatusChangedSchema, ShopChangedSchema, type OperationStatusChanged, type ShopChanged } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { STATUS_CHANGED_FILTERS, statusChangedSubject } from "@pgw/proto/subjects";
import type { NatsConnection } from "nats";
import type { EvidenceSource } from "./connectors/evidence";
import type { NumberSource } from "./connectors/operation-number";
import { rfc3339, webhookBody, webhookIdFor, webhookTypeFor } from "./domain/message";
import { applyShopWebhookUrl, insertDelivery, type NotifierDb } from "./store";

export const SUBJECTS = { shopChanged: "pgw.accounts.shop_changed" } as const;

/**
 * One durable consumer of the status changes that fire a webhook. Durable names: replicas of one
 * deployment share them (each event goes to one replica); deployments sharing a NATS server (test
 * stacks) are kept apart by NATS_NAMESPACE, which the kit applies to subjects and durables.
 */
export interface StatusConsumer {
  durable: string;
  filterSubject: string;
}

/**
 * The status consumers, whose filters between them let through exactly the webhook statuses
 * (events.test.ts). NATS 2.9 allows one filter per consumer, hence two: one filter for both would
 * have to be every change, and then each create's `pending` (most events) would be sent here and
 * acknowledged for nothing, about a twentieth of a create's CPU. Both feed one handler and record
 * under one processed_events name (STATUS_PROCESSED_AS, the one name before there were two), so one
 * reconciler replays for both. A webhook's order against another status of the same operation is
 * not promised (retries reorder them anyway); each consumer keeps one operation's events in order.
 */
export const STATUS_CONSUMERS: readonly StatusConsumer[] = [
  { durable: "notifier-status", filterSubject: STATUS_CHANGED_FILTERS.terminal },
  { durable: "notifier-awaiting", filterSubject: statusChangedSubject("awaiting_confirmation") },
];

/** The processed_events name of every status consumer and of their reconciler. */
export const STATUS_PROCESSED_AS = "notifier-status";

/** The durable consumer of shop changes (named as the status consumers are). */
export const SHOPS_DURABLE = "notifier-shops";

/** A status event the notifier cannot use (no operation snapshot, bad ids): logged and dropped. */
export class UnusableEvent extends Error {}

/** The event's operation id (lowercase), from the event or else its snapshot; empty when neither has one. */
const operationIdOf = (ev: OperationStatusChanged): string => (ev.operationId || ev.operation?.operationId || "").toLowerCase();
/** The event's shop id (lowercase), from the event or else its snapshot; empty when neither has one. */
const shopIdOf = (ev: OperationStatusChanged): string => (ev.shopId || ev.operation?.shopId || "").toLowerCase();

/** Decodes a status event; throws UnusableEvent when a webhook could never be built from it. */
export function decodeStatusChanged(data: Uint8Array): OperationStatusChanged {
  const ev = fromBinary(OperationStatusChangedSchema, data);
  const operationId = operationIdOf(ev);
  if (webhookTypeFor(ev.status) && (!ev.operation || !isUuid(shopIdOf(ev)) || !isUuid(operationId))) {
    throw new UnusableEvent(`status event ${ev.eventId} for ${operationId || "?"} has no usable operation snapshot`);
  }
  return ev;
}

export interface ConsumerDeps {
  /** The kit's consumer runs each event in a transaction of the unit's pool. */
  db: NotifierDb;
  nc: NatsConnection;
  log: KitLog;
  /** Open the events' sealed numbers, and seal the delivery bodies the store keeps. */
  keys: DataKeys;
  evidence: EvidenceSource;
  /** Operations' answer, for an event whose number the unit cannot open. */
  numberOf: NumberSource;
}

/**
 * The webhook's `number`: an old event's clear one (published before numbers were sealed); else the
 * event's sealed one, opened with the unit's data keys; else operations' answer, when the event has
 * none (published before it carried one, or the operation has no number) or it cannot be opened
 * (sealed under a key this unit does not hold: a warning).
 */
async function numberFor(ev: OperationStatusChanged, deps: Pick<ConsumerDeps, "keys" | "log" | "numberOf">): Promise<string | undefined> {
  if (ev.operation?.number) return ev.operation.number;
  if (ev.sealedNumber) {
    try {
      return deps.keys.open(ev.sealedNumber);
    } catch (err) {
      if (!(err instanceof SealedValueError)) throw err;
      deps.log.warn({ err, event_id: ev.eventId, operation_id: operationIdOf(ev) }, "status event's sealed number cannot be opened; asking operations");
    }
  }
  return deps.numberOf(shopIdOf(ev), operationIdOf(ev));
}

/** What a webhook body needs from other units, asked before the consumer's transaction opens. */
interface Fetched {
  number: string | undefined;
  evidence: Evidence | null;
}

/**
 * How one consumer's status changes become deliveries: live from JetStream, and replayed by
 * reconciliation (which reads every status change: `relevant` keeps the webhook ones).
 * `concurrency` events at once; one operation's events in order, so its deliveries are created
 * in the order of its statuses.
 */
export function statusConsumerOptions(deps: ConsumerDeps, consumer: StatusConsumer, concurrency = 1): ConsumerOptions<OperationStatusChanged, Fetched> {
  return {
    nc: deps.nc,
    durable: consumer.durable,
    filterSubject: consumer.filterSubject,
    processedAs: STATUS_PROCESSED_AS,
    decode: decodeStatusChanged, // a throw is logged and the message terminated by the kit
    db: deps.db,
    log: deps.log,
    concurrency,
    orderKey: operationIdOf,
    relevant: (ev) => webhookTypeFor(ev.status) !== null,
    // Before the transaction opens, so no connection waits on a call: the number (numberFor), and a
    // completed operation's receipts, made from the provider's legs when the event carries them, else
    // from the receipts unit, which may first have to ask the provider.
    prepare: async (ev) => {
      const op = ev.operation!;
      const [number, evidence] = await Promise.all([
        numberFor(ev, deps),
        ev.status === "completed" ? deps.evidence({ ...op, operationId: operationIdOf(ev) }, ev) : null,
      ]);
      return { number, evidence };
    },
    handle: async (tx, ev, meta, { number, evidence }) => {
      const type = webhookTypeFor(ev.status);
      if (!type) return;
      const webhookId = webhookIdFor(meta.eventId);
      const body = webhookBody(webhookId, type, rfc3339(ev.occurredAt, new Date()), operationStateJson({ ...ev.operation!, number }, evidence));
      await insertDelivery(tx, deps.keys, { webhookId, shopId: shopIdOf(ev), operationId: operationIdOf(ev), eventType: type, payload: body });
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
export function startShopConsumer(deps: Pick<ConsumerDeps, "db" | "nc" | "log">, durable: string): Promise<RunningConsumer> {
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
