import { createClient, type Client } from "@connectrpc/connect";
import { createPeerTransport, type GrpcTls } from "@pgw/kit/rpc";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";

/** The services receipts calls: operations (state, review outcome) and routing (provider questions). */
export interface Peers {
  operations: Client<typeof OperationsService>;
  routing: Client<typeof RoutingService>;
}

export function createPeers(operationsUrl: string, routingUrl: string, timeoutMs: number, tls: GrpcTls | null): Peers {
  return {
    operations: createClient(OperationsService, createPeerTransport(operationsUrl, { timeoutMs, tls })),
    routing: createClient(RoutingService, createPeerTransport(routingUrl, { timeoutMs, tls })),
  };
}
