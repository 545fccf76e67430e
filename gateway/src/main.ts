import { connectNats, setNamespace, loadNatsAuth, natsReady } from "@pgw/kit/events";
import { createHttpServer, listen, probeHandler, startProbeServer, type ProbeState } from "@pgw/kit/http";
import { loadGrpcTls } from "@pgw/kit/rpc";
import { type Logger, bindHost, createLogger, reportTracing, runMain, unitMetricsRegistry } from "@pgw/kit/runtime";
import type http from "node:http";
import { createAdminApp } from "./admin/app";
import { createPublicApp } from "./app";
import { AuthRefusals } from "./auth/auth-refusals";
import { ClientAttempts } from "./auth/client-attempts";
import { KeyCache } from "./auth/key-cache";
import { createUnknownKeys } from "./auth/unknown-keys";
import { watchRevocations } from "./auth/revocations";
import { KeyRateLimits } from "./auth/key-rate-limits";
import { createGatewayClients } from "./clients";
import { httpMetrics, measureHttp } from "./http/http-metrics";
import { loadGatewayConfig } from "./config";
import { ReceiptEvidence } from "./receipt-evidence";
import { TerminalOperations } from "./terminal-operations";
import { upstreamServing } from "./upstream-health";
import { readOpenApiDocument } from "./routes/openapi-document";
import { readCheckoutAssets } from "./checkout/assets";

// Large enough that an absurd X-API-Key reaches our auth (401) instead of Node's 431.
const MAX_HEADER_BYTES = 1024 * 1024;

/** Starts the gateway: public merchant API, admin API, probe port; `log` replaces its stdout logger (tests read it). */
export async function startGateway(source: NodeJS.ProcessEnv = process.env, log?: Logger) {
  const config = loadGatewayConfig(source);
  const natsAuth = loadNatsAuth(source);
  log ??= createLogger("gateway", config.LOG_LEVEL);
  reportTracing(source, log);
  const openApiDocument = readOpenApiDocument(__dirname);
  const checkoutAssets = readCheckoutAssets(__dirname);
  const registry = unitMetricsRegistry();

  const clients = createGatewayClients(config, loadGrpcTls(source), registry);
  // The probe port opens first, so a start-up waiting for NATS is live but not ready (as a
  // service's is); ready once the public port listens.
  let serving = false;
  const state: ProbeState = { accepting: true, checks: { serving: async () => serving, nats: async () => false, operations: upstreamServing(clients.operationsHealth) } };
  const host = bindHost(source);
  const probeServer = await startProbeServer(config.HEALTH_PORT, host, state, registry);
  const nc = await connectNats(config.NATS_URL, "gateway", log, natsAuth);
  setNamespace(nc, config.NATS_NAMESPACE);
  state.checks.nats = () => natsReady(nc, 1000);
  const cache = new KeyCache(config.API_KEY_CACHE_TTL_MS);
  const revocations = watchRevocations(nc, cache, log);
  const keyRateLimits = new KeyRateLimits(nc, { registry, log });

  const probes = probeHandler(state, registry);
  const receiptEvidence = new ReceiptEvidence({ receipts: clients.receipts, linkSecret: config.RECEIPT_URL_SECRET, log });
  const refusals = new AuthRefusals(registry);
  const publicApp = createPublicApp({
    log,
    clients,
    config,
    probes,
    receiptEvidence,
    terminalOperations: new TerminalOperations(),
    accounts: clients.accounts,
    cache,
    unknownKeys: createUnknownKeys(config.API_KEY_UNKNOWN_TTL_MS),
    limiter: keyRateLimits,
    attempts: new ClientAttempts({
      trustedProxies: config.TRUSTED_PROXIES,
      perSecond: config.UNAUTHENTICATED_RATE_LIMIT_RPS,
      burst: config.UNAUTHENTICATED_RATE_LIMIT_RPS * 2,
      message: "too many requests without a valid api key from this address",
    }),
    refusals,
    apiKeyHashSecret: config.API_KEY_HASH_SECRET,
    openApiDocument,
    checkoutAssets,
  });
  const adminApp = createAdminApp({
    log,
    clients,
    keyCache: cache,
    paymentPageHost: config.PAYMENT_PAGE_HOST,
    adminToken: config.ADMIN_TOKEN,
    localMode: config.LOCAL_MODE,
    attempts: new ClientAttempts({
      trustedProxies: config.TRUSTED_PROXIES,
      perSecond: config.ADMIN_SIGN_IN_FAILURES_PER_MINUTE / 60,
      burst: config.ADMIN_SIGN_IN_FAILURES_PER_MINUTE,
      message: "too many failed sign-ins from this address",
    }),
    refusals,
  });

  const requestMetrics = httpMetrics(registry);
  measureHttp(publicApp, requestMetrics, "public");
  measureHttp(adminApp, requestMetrics, "admin");
  const publicServer = createHttpServer(publicApp.callback(), { maxHeaderSize: MAX_HEADER_BYTES });
  const adminServer = createHttpServer(adminApp.callback());
  const httpPort = await listen(publicServer, config.HTTP_PORT, host);
  const adminPort = await listen(adminServer, config.ADMIN_PORT, host);
  serving = true;
  log.info({ httpPort, adminPort, healthPort: config.HEALTH_PORT }, "gateway ready");

  const close = (server: http.Server) =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_GRACE_MS).unref();
    });
  return {
    httpPort,
    adminPort,
    healthPort: (probeServer.address() as { port: number }).port,
    async stop() {
      state.accepting = false;
      await Promise.all([close(publicServer), close(adminServer)]);
      revocations.stop();
      keyRateLimits.stop();
      await nc.drain().catch(() => undefined);
      await close(probeServer);
      log.info("gateway stopped");
    },
  };
}

if (require.main === module) runMain(() => startGateway());
