import { createClient } from "@connectrpc/connect";
import { createPeerTransport, type GrpcTls } from "@pgw/kit/rpc";
import type { Registry } from "prom-client";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { Health } from "@pgw/proto/gen/grpc/health/v1/health_pb";
import { ReceiptsService } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import { NotifierService } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";
import { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import type { GatewayConfig } from "./config";

/** Clients of the services the gateway translates public calls into (mutual TLS with `tls`), one transport per unit, each call timed in `registry`. */
export function createGatewayClients(config: GatewayConfig, tls: GrpcTls | null, registry?: Registry) {
  const transport = (url: string) => createPeerTransport(url, { timeoutMs: config.UPSTREAM_TIMEOUT_MS, tls, registry });
  const operations = transport(config.OPERATIONS_URL);
  return {
    accounts: createClient(AccountsService, operations),
    operations: createClient(OperationsService, operations),
    operationsHealth: createClient(Health, operations),
    ledger: createClient(LedgerService, transport(config.LEDGER_URL)),
    receipts: createClient(ReceiptsService, transport(config.RECEIPTS_URL)),
    notifier: createClient(NotifierService, transport(config.NOTIFIER_URL)),
    routing: createClient(RoutingService, transport(config.ROUTING_URL)),
  };
}

export type GatewayClients = ReturnType<typeof createGatewayClients>;
