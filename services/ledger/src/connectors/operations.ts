/**
 * operations, as the ledger calls it: GetOperationState for the orphan-reserve sweep, and
 * ListStatusEvents, the record of status events that reconciliation replays.
 */
import { createClient, type Client } from "@connectrpc/connect";
import { operationsStatusEvents, type EventSource } from "@pgw/kit/events";
import { createPeerTransport, type GrpcTls } from "@pgw/kit/rpc";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";

export type OperationsClient = Client<typeof OperationsService>;

/** Clients of operations at `url` (mutual TLS outside local mode); nothing connects before the first call. */
export function connectOperations(url: string, tls: GrpcTls | null): { client: OperationsClient; statusEvents: EventSource } {
  return { client: createClient(OperationsService, createPeerTransport(url, { tls })), statusEvents: operationsStatusEvents(url, tls) };
}
