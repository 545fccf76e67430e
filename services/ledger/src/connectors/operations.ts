/**
 * operations, as the ledger calls it: GetOperationState for the orphan-reserve sweep, and
 * ListStatusEvents, the record of status events that reconciliation replays.
 */
import { createClient, type Client } from "@connectrpc/connect";
import { operationsStatusEvents, type EventSource } from "@pgw/kit/events";
import { createPeerTransport, type GrpcTls } from "@pgw/kit/rpc";
import type { Registry } from "prom-client";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";

export type OperationsClient = Client<typeof OperationsService>;

/** Clients of operations at `url` (mutual TLS outside local mode), each call timed in `registry`; nothing connects before the first call. */
export function connectOperations(url: string, tls: GrpcTls | null, registry?: Registry): { client: OperationsClient; statusEvents: EventSource } {
  return { client: createClient(OperationsService, createPeerTransport(url, { tls, registry })), statusEvents: operationsStatusEvents(url, tls, registry) };
}
