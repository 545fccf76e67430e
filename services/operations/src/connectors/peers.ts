import { createClient, type Client } from "@connectrpc/connect";
import { createPeerTransport, type GrpcTls } from "@pgw/kit/rpc";
import { NotifiedCache } from "@pgw/kit/db";
import type { Registry } from "prom-client";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import { paymentQuotes, type KeptTariffs, type PaymentQuotes } from "./payment-quotes";

/** The services operations calls during a create (docs/architecture.md, Creating an operation). */
export interface Peers {
  routing: Client<typeof RoutingService>;
  ledger: Client<typeof LedgerService>;
  /** A payment's figures: the ledger's Quote, or the tariff it answered before (payment-quotes.ts). */
  quotePayment: PaymentQuotes;
  /** The tariffs `quotePayment` keeps; kept only while the ledger's change signal is followed (main.ts). */
  tariffs: KeptTariffs;
}

/** Clients of routing and the ledger, each call timed in `registry` (the unit's). */
export function createPeers(routingUrl: string, ledgerUrl: string, tls: GrpcTls | null, registry?: Registry): Peers {
  const ledger = createClient(LedgerService, createPeerTransport(ledgerUrl, { tls, registry }));
  const tariffs: KeptTariffs = new NotifiedCache();
  return { routing: createClient(RoutingService, createPeerTransport(routingUrl, { tls, registry })), ledger, quotePayment: paymentQuotes(ledger, tariffs), tariffs };
}
