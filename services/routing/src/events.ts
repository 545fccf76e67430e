/** What routing publishes (provider updates) and consumes (operation status changes). */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { startConsumer, type KitLog, type OutboxEvent, type RunningConsumer } from "@pgw/kit/events";
import { OperationStatusChangedSchema, ProviderUpdateSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { statusChangedSubject } from "@pgw/proto/subjects";
import { randomUUID } from "node:crypto";
import type { NatsConnection } from "nats";
import type { EvidenceLegFacts } from "./connectors/connector";
import type { ProviderUpdateFacts } from "./domain/callback";
import type { Sql } from "./store";

/** Subjects on stream PGW. */
export const SUBJECTS = {
  /** Published: a verified provider callback, or a provider status asked for. */
  providerUpdate: "pgw.routing.provider_update",
  /** Consumed: operations' status changes (cancelled → release the allocation). */
  operationStatusChanged: statusChangedSubject("cancelled"),
} as const;

/**
 * A ProviderUpdate as an outbox event, for the statement that moves its allocation to write
 * (store `setAllocationStatus`), with the provider's evidence legs when they are known (a
 * completion's, asked with its callback).
 */
export function providerUpdateEvent(update: ProviderUpdateFacts, evidenceLegs?: EvidenceLegFacts[]): OutboxEvent {
  const id = randomUUID();
  const payload = create(ProviderUpdateSchema, { eventId: id, ...update, evidence: evidenceLegs && { legs: evidenceLegs } });
  return { id, subject: SUBJECTS.providerUpdate, payload: toBinary(ProviderUpdateSchema, payload) };
}

/**
 * Durable consumer of operation status changes: a `cancelled` operation has its allocation
 * released (the path of a cancel; the Release RPC serves a create undoing its own allocation).
 *
 * `release` does its own writes and calls the provider, so it runs in the consumer's `prepare` step,
 * before the event id is recorded (no connection waits on the provider);
 * Release is idempotent, so a redelivery after a failed commit repeats nothing.
 */
export function startStatusConsumer(opts: {
  nc: NatsConnection;
  db: Sql;
  log: KitLog;
  release: (operationId: string, reason: string) => Promise<unknown>;
}): Promise<RunningConsumer> {
  return startConsumer({
    nc: opts.nc,
    db: opts.db,
    log: opts.log,
    durable: "routing-status",
    filterSubject: SUBJECTS.operationStatusChanged,
    decode: (data) => fromBinary(OperationStatusChangedSchema, data),
    relevant: (event) => event.status === "cancelled",
    prepare: async (event) => void (await opts.release(event.operationId, "operation cancelled")), // only cancelled ones are relevant
  });
}
