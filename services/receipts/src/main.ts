/** The receipts unit's wiring: configuration, peers, PDF reader, store, routes and jobs → runService. */
import { operationsStatusEvents } from "@pgw/kit/events";
import { loadGrpcTls } from "@pgw/kit/rpc";
import { runMain, runService, SingleFlight, unitMetricsRegistry, type ServiceDeps } from "@pgw/kit/runtime";
import path from "node:path";
import { loadReceiptsConfig } from "./config";
import { createPdfReader } from "./connectors/pdf-reader";
import { createPeers } from "./connectors/peers";
import { startStatusConsumer } from "./events";
import type { ReceiptsDeps } from "./handlers/deps";
import { startStatusReconciliation } from "./jobs/status-reconciliation";
import { ACCESS, routes } from "./routes";
import { postgresFileStorage, type DB, type Db } from "./store";

/** Starts the receipts unit with the given environment (variables: see config.ts). */
export async function startReceipts(source: NodeJS.ProcessEnv = process.env) {
  const config = loadReceiptsConfig(source);
  const grpcTls = loadGrpcTls(source);
  const registry = unitMetricsRegistry();
  const peers = createPeers(config.OPERATIONS_URL, config.ROUTING_URL, config.UPSTREAM_TIMEOUT_MS, grpcTls, registry);
  const pdf = createPdfReader({
    timeoutMs: config.PDF_PARSE_TIMEOUT_MS,
    maxDecodedBytes: config.PDF_MAX_DECODED_MB * 2 ** 20,
    maxRssMb: config.PDF_PARSE_MAX_RSS_MB,
    maxConcurrent: config.PDF_PARSE_CONCURRENCY,
  });
  // One for the process: the consumer's and the RPCs' deps must share it.
  const materialising: ReceiptsDeps["materialising"] = new SingleFlight();
  const depsOf = ({ sql, log }: ServiceDeps<Db, DB>): ReceiptsDeps => ({
    sql,
    log,
    files: postgresFileStorage(sql),
    pdf,
    peers,
    links: { baseUrl: config.PUBLIC_BASE_URL, secret: config.RECEIPT_URL_SECRET },
    materialising,
    now: () => new Date(),
  });
  return runService<Db, DB>(
    {
      name: "receipts",
      grpcTls,
      grpcPort: 50054,
      healthPort: 9094,
      migrationsDir: path.join(__dirname, "..", "prisma", "migrations"),
      access: ACCESS,
      registry,
      routes: (d) => routes(depsOf(d)),
      background: async (d) => {
        const deps = { ...depsOf(d), nc: d.nc };
        return [await startStatusConsumer(deps), startStatusReconciliation(deps, operationsStatusEvents(config.OPERATIONS_URL, grpcTls, registry))];
      },
    },
    source,
  );
}

if (require.main === module) runMain(() => startReceipts());
