import { createClient, type Client } from "@connectrpc/connect";
import { createPeerTransport, type GrpcTls } from "@pgw/kit/rpc";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";

/** The services operations calls during a create (docs/architecture.md, Creating an operation). */
export interface Peers {
  routing: Client<typeof RoutingService>;
  ledger: Client<typeof LedgerService>;
}

export function createPeers(routingUrl: string, ledgerUrl: string, tls: GrpcTls | null): Peers {
  return { routing: createClient(RoutingService, createPeerTransport(routingUrl, { tls })), ledger: createClient(LedgerService, createPeerTransport(ledgerUrl, { tls })) };
}
