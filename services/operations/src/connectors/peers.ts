import { createClient, type Client } from "@connectrpc/connect";
import { createPeerTransport, type GrpcTls } from "@pgw/kit/rpc";
import type { Registry } from "prom-client";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";

/** The services operations calls during a create (docs/architecture.md, Creating an operation). */
export interface Peers {
  routing: Client<typeof RoutingService>;
  ledger: Client<typeof LedgerService>;
}

/** Clients of routing and the ledger, each call timed in `registry` (the unit's). */
export function createPeers(routingUrl: string, ledgerUrl: string, tls: GrpcTls | null, registry?: Registry): Peers {
  return { routing: createClient(RoutingService, createPeerTransport(routingUrl, { tls, registry })), ledger: createClient(LedgerService, createPeerTransport(ledgerUrl, { tls, registry })) };
}
