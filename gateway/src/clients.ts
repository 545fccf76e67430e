import { createServiceClient, type GrpcTls } from "@pgw/kit";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { Health } from "@pgw/proto/gen/grpc/health/v1/health_pb";
import { ReceiptsService } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import { NotifierService } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";
import { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import type { GatewayConfig } from "./config";

/** gRPC clients of the services the gateway translates public calls into (mutual TLS with `tls`). */
export function createGatewayClients(config: GatewayConfig, tls: GrpcTls | null) {
  const timeout = config.UPSTREAM_TIMEOUT_MS;
  return {
    accounts: createServiceClient(AccountsService, config.OPERATIONS_URL, timeout, tls),
    operations: createServiceClient(OperationsService, config.OPERATIONS_URL, timeout, tls),
    operationsHealth: createServiceClient(Health, config.OPERATIONS_URL, 1000, tls),
    ledger: createServiceClient(LedgerService, config.LEDGER_URL, timeout, tls),
    receipts: createServiceClient(ReceiptsService, config.RECEIPTS_URL, timeout, tls),
    notifier: createServiceClient(NotifierService, config.NOTIFIER_URL, timeout, tls),
    routing: createServiceClient(RoutingService, config.ROUTING_URL, timeout, tls),
  };
}

export type GatewayClients = ReturnType<typeof createGatewayClients>;
