import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { isSealed } from "@pgw/kit/db";
import { enqueueEvent, startConsumer, type OutboxEvent } from "@pgw/kit/events";
import { type Logger, type Stoppable } from "@pgw/kit/runtime";
import { ApiKeyRevokedSchema, OperationStatusChangedSchema, ProviderUpdateSchema, ShopChangedSchema, type ProviderEvidence, type ProviderUpdate } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { statusChangedSubject } from "@pgw/proto/subjects";
import type { NatsConnection } from "nats";
import { randomUUID } from "node:crypto";
import { operationSnapshot } from "./handlers/wire";
import { countStatusChange } from "./metrics";
import { updateOperationWithEvent, type ApiKeyRow, type OperationChange, type OperationRow, type ShopRow, type Sql, type Tx } from "./store";

/** Subjects this service publishes and consumes (stream PGW); status changes: @pgw/proto/subjects. */
export const SUBJECTS = {
  apiKeyRevoked: "pgw.accounts.api_key_revoked",
  shopChanged: "pgw.accounts.shop_changed",
  providerUpdate: "pgw.routing.provider_update",
} as const;

function enqueue<S extends Parameters<typeof create>[0]>(tx: Tx, subject: string, schema: S, init: (eventId: string) => Parameters<typeof create<S>>[1]) {
  const eventId = randomUUID();
  const message = create(schema, init(eventId));
  return enqueueEvent(tx, subject, toBinary(schema, message as never), eventId);
}

/** Outbox row announcing a revoked key, so every gateway replica evicts it from its cache. */
export function enqueueApiKeyRevoked(tx: Tx, key: ApiKeyRow): Promise<string> {
  return enqueue(tx, SUBJECTS.apiKeyRevoked, ApiKeyRevokedSchema, (eventId) => ({
    eventId,
    apiKeyId: key.id,
    keyHash: key.keyHash,
    shopId: key.shopId,
    occurredAt: (key.revokedAt ?? new Date()).toISOString(),
  }));
}

/** Outbox row carrying the shop settings that other services keep a copy of. */
export function enqueueShopChanged(tx: Tx, shop: ShopRow): Promise<string> {
  return enqueue(tx, SUBJECTS.shopChanged, ShopChangedSchema, (eventId) => ({
    eventId,
    shopId: shop.id,
    merchantId: shop.merchantId,
    webhookUrl: shop.webhookUrl ?? undefined,
    settlementCurrency: shop.settlementCurrency,
    overdraftLimit: shop.overdraftLimit.toFixed(6),
    rateLimitRps: shop.rateLimitRps,
    occurredAt: shop.updatedAt.toISOString(),
  }));
}

/**
 * Writes a status change to `row`, locked in `tx`, in one statement with its outbox row on the
 * status's subject, counts it at commit, and answers the row as stored. The notifier reads the
 * terminal ones and awaiting_confirmation, ledger the terminal ones, receipts the completed and
 * routing the cancelled. The operation in it has no `number` (operationSnapshot); the number
 * travels sealed beside it (statusChangedEvent). A completion the provider reported carries the
 * provider's evidence legs when its update did.
 */
export async function writeStatusChange(tx: Tx, row: OperationRow, change: OperationChange & { status: string }, providerEvidence?: ProviderEvidence): Promise<OperationRow> {
  const updated = await updateOperationWithEvent(tx, row, change, (changed) => statusChangedEvent(changed, row.status, providerEvidence));
  countStatusChange(tx, updated, row.status);
  return updated;
}

/**
 * The status change to `row` as an outbox event, for a statement that writes it itself (kit
 * `changeWithEvent`). `sealedNumber` is the row's `number` as stored, sealed, so the notifier opens
 * it with its own data keys instead of asking for it; a number an earlier version stored in clear
 * (before the re-seal pass) is left out, since events reach the NATS store in clear.
 * `providerEvidence`: a provider completion's evidence legs, as its update carried them.
 */
export function statusChangedEvent(row: OperationRow, previousStatus: string, providerEvidence?: ProviderEvidence): OutboxEvent {
  const id = randomUUID();
  const message = create(OperationStatusChangedSchema, {
    eventId: id,
    operationId: row.id,
    shopId: row.shopId,
    merchantId: row.merchantId,
    previousStatus,
    status: row.status,
    operation: operationSnapshot(row),
    occurredAt: row.updatedAt.toISOString(),
    sealedNumber: row.number && isSealed(row.number) ? row.number : "",
    providerEvidence,
  });
  return { id, subject: statusChangedSubject(row.status), payload: toBinary(OperationStatusChangedSchema, message) };
}

/**
 * Durable consumer of provider updates (published by routing from verified callbacks), each given
 * to `apply` inside the consumer's transaction with the time the stream stored it. Updates of
 * different operations are applied `concurrency` at once; those of one operation one after another
 * in stream order here, and `apply` keeps routing's order across replicas and relays.
 */
export function consumeProviderUpdates(
  deps: { nc: NatsConnection; sql: Sql; log: Logger; concurrency: number },
  apply: (tx: Tx, update: ProviderUpdate, storedAt: Date) => Promise<void>,
): Promise<Stoppable> {
  return startConsumer({
    nc: deps.nc,
    durable: "operations-provider-updates",
    filterSubject: SUBJECTS.providerUpdate,
    decode: (data) => fromBinary(ProviderUpdateSchema, data),
    db: deps.sql,
    log: deps.log,
    concurrency: deps.concurrency,
    orderKey: (update) => update.operationId.toLowerCase(),
    // The kit types its transactions as raw SQL clients; on `sql` (a kit pool) each one is a kit transaction.
    handle: (tx, update, meta) => apply(tx as Tx, update, meta.storedAt),
  });
}
