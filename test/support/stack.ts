import type { Logger } from "@pgw/kit/runtime";
import { startGateway } from "../../gateway/src/main";
import { startLedger } from "../../services/ledger/src/main";
import { startNotifier } from "../../services/notifier/src/main";
import { startOperations } from "../../services/operations/src/main";
import { startSandbox } from "../../services/provider-sandbox/src/main";
import { startReceipts } from "../../services/receipts/src/main";
import { startRouting } from "../../services/routing/src/main";
import { randomBytes } from "node:crypto";
import { freePortsForLater } from "../../deploy/local/src/free-port";
import { dropDatabases, natsUrl, uniqueDatabaseUrl } from "./infra";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

export interface StackOptions {
  /** Database URL rewrite per unit (e.g. through a TCP proxy a test can cut). */
  databaseUrl?: (unit: string, url: string) => string;
  /** NATS URL per unit. */
  natsUrl?: (unit: string) => string;
  /** NATS_NAMESPACE of every unit (default: one of the stack's own). */
  natsNamespace?: string;
  /** Extra environment per unit, e.g. { operations: { CREATE_DEADLINE_MS: "2000" } }. */
  env?: Record<string, Record<string, string>>;
  /** Sees (and may wrap) each unit's environment before the unit starts with it. */
  observeEnv?: (unit: string, env: NodeJS.ProcessEnv) => NodeJS.ProcessEnv;
}

/**
 * The whole system in this process: every unit on free ports with fresh databases of unique names
 * (dropped by stop()), against the run's real Postgres and NATS. Nothing is mocked.
 */
export async function startStack(options: StackOptions = {}) {
  const databases: Record<string, string> = {};
  // Every stack has its own NATS namespace: stacks of parallel test files never see each other's events.
  const namespace = options.natsNamespace ?? `t${randomBytes(4).toString("hex")}`;
  const unitEnv = (unit: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    databases[unit] = uniqueDatabaseUrl(unit);
    const env: NodeJS.ProcessEnv = {
      DATABASE_URL: options.databaseUrl?.(unit, databases[unit]) ?? databases[unit],
      NATS_URL: options.natsUrl?.(unit) ?? natsUrl(),
      NATS_NAMESPACE: namespace,
      GRPC_PORT: "0",
      HEALTH_PORT: "0",
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
      LOCAL_MODE: "true",
      SHUTDOWN_GRACE_MS: "2000",
      // Two test files run at once, each with a whole stack, on a Postgres that allows 100 connections.
      DB_POOL_SIZE: "5",
      ...extra,
      ...options.env?.[unit],
    };
    return options.observeEnv?.(unit, env) ?? env;
  };
  // Started in dependency order, each told where its peers listen.
  const grpc = (port: number) => `http://127.0.0.1:${port}`;
  // Both bound only after other units started: ports no outgoing connection can take meanwhile.
  // Operations is started after the units it calls, but they replay its event record: its port is known up front.
  const [gatewayPort, operationsPort] = await freePortsForLater(2);
  const operationsUrl = grpc(operationsPort);
  const publicUrl = `http://127.0.0.1:${gatewayPort}`;
  const sandbox = await startSandbox(unitEnv("provider-sandbox", { HTTP_PORT: "0" }));
  const [routing, ledger] = await Promise.all([
    startRouting(unitEnv("routing", { SANDBOX_URL: `http://127.0.0.1:${sandbox.port}` })),
    startLedger(unitEnv("ledger", { OPERATIONS_URL: operationsUrl })),
  ]);
  const peers = { ROUTING_URL: grpc(routing.grpcPort), LEDGER_URL: grpc(ledger.grpcPort) };
  const operations = await startOperations(unitEnv("operations", { ...peers, GRPC_PORT: String(operationsPort) }));
  const receipts = await startReceipts(unitEnv("receipts", { ...peers, OPERATIONS_URL: grpc(operations.grpcPort), PUBLIC_BASE_URL: publicUrl }));
  const notifier = await startNotifier(unitEnv("notifier", { RECEIPTS_URL: grpc(receipts.grpcPort), OPERATIONS_URL: operationsUrl }));
  const gatewayEnv = unitEnv("gateway", {
    HTTP_PORT: String(gatewayPort),
    ADMIN_PORT: "0",
    ADMIN_TOKEN,
    PAYMENT_PAGE_HOST: `${publicUrl}/pay`,
    OPERATIONS_URL: grpc(operations.grpcPort),
    ROUTING_URL: grpc(routing.grpcPort),
    LEDGER_URL: grpc(ledger.grpcPort),
    RECEIPTS_URL: grpc(receipts.grpcPort),
    NOTIFIER_URL: grpc(notifier.grpcPort),
    // Every test request comes from 127.0.0.1: files that test the per-address limit set their own.
    UNAUTHENTICATED_RATE_LIMIT_RPS: "1000",
    ADMIN_SIGN_IN_FAILURES_PER_MINUTE: "1000",
  });
  delete gatewayEnv.DATABASE_URL;
  delete databases.gateway;
  const gateway = await startGateway(gatewayEnv);
  const services = { operations, routing, ledger, receipts, notifier };

  return {
    services,
    /** Each unit's database URL, for tests that must set up what no API can (a process that died mid-call). */
    databases,
    sandbox,
    gateway,
    publicUrl,
    namespace,
    sandboxUrl: `http://127.0.0.1:${sandbox.port}`,
    adminUrl: `http://127.0.0.1:${gateway.adminPort}`,
    async stop() {
      await stopReporting("gateway", gateway);
      await Promise.all([...Object.entries(services).map(([unit, s]) => stopReporting(unit, s)), stopReporting("provider-sandbox", sandbox)]);
      await dropDatabases(Object.values(databases));
    },
  };
}

/**
 * Stops a unit, saying on stderr which one is still stopping after 15 s: units log nothing in tests,
 * and a test file's stop hook times out without naming the unit that held it.
 */
async function stopReporting(unit: string, running: { stop(): Promise<void> }): Promise<void> {
  const report = setTimeout(() => process.stderr.write(`test stack: ${unit} still stopping after 15 s\n`), 15_000);
  try {
    await running.stop();
  } finally {
    clearTimeout(report);
  }
}

export type Stack = Awaited<ReturnType<typeof startStack>>;

/** Another gateway replica on the stack's services and NATS namespace (stop it yourself); `log` reads its lines. */
export function startGatewayReplica(stack: Stack, env: Record<string, string> = {}, log?: Logger) {
  const grpc = (port: number) => `http://127.0.0.1:${port}`;
  return startGateway(
    {
      HTTP_PORT: "0",
      ADMIN_PORT: "0",
      HEALTH_PORT: "0",
      LOG_LEVEL: "silent",
      LOCAL_MODE: "true",
      ADMIN_TOKEN,
      NATS_URL: natsUrl(),
      NATS_NAMESPACE: stack.namespace,
      OPERATIONS_URL: grpc(stack.services.operations.grpcPort),
      ROUTING_URL: grpc(stack.services.routing.grpcPort),
      LEDGER_URL: grpc(stack.services.ledger.grpcPort),
      RECEIPTS_URL: grpc(stack.services.receipts.grpcPort),
      NOTIFIER_URL: grpc(stack.services.notifier.grpcPort),
      ...env,
    },
    log,
  );
}

/** Admin API call with the stack's token. */
export async function admin(stack: Stack, method: string, path: string, body?: unknown) {
  const res = await fetch(stack.adminUrl + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

/** A merchant, a shop and an API key issued through the admin API. */
export async function createShopWithKey(stack: Stack, shop: Record<string, unknown> = {}) {
  const merchant = await admin(stack, "POST", "/admin/api/merchants", { name: "Test merchant" });
  const created = await admin(stack, "POST", "/admin/api/shops", { merchant_id: merchant.body.id, name: "Test shop", ...shop });
  const key = await admin(stack, "POST", `/admin/api/shops/${created.body.id}/api-keys`, { label: "test" });
  return {
    merchantId: merchant.body.id as string,
    shopId: created.body.id as string,
    apiKeyId: key.body.id as string,
    apiKey: key.body.api_key as string,
    /** The shop's first webhook signing secret, shown only in the creation response. */
    webhookSecret: created.body.webhook_secret as string,
  };
}
