import { createClient, type Client } from "@connectrpc/connect";
import { createPeerTransport, type GrpcTls } from "@pgw/kit/rpc";
import type { Registry } from "prom-client";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";

/** The services receipts calls: operations (state, review outcome) and routing (provider questions). */
export interface Peers {
  operations: Client<typeof OperationsService>;
  routing: Client<typeof RoutingService>;
}

/** Clients of operations and routing, each call timed in `registry` (the unit's). */
export function createPeers(operationsUrl: string, routingUrl: string, timeoutMs: number, tls: GrpcTls | null, registry?: Registry): Peers {
  return {
    operations: createClient(OperationsService, createPeerTransport(operationsUrl, { timeoutMs, tls, registry })),
    routing: createClient(RoutingService, createPeerTransport(routingUrl, { timeoutMs, tls, registry })),
  };
}
