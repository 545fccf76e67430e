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
import { ServiceAddress } from "./service-address";

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
  /** Instances of every unit but the provider sandbox (default: STACK_REPLICAS, else 1). */
  replicas?: number;
}

/** Units that run replicated, and the addresses their replicas are reached at. */
const REPLICATED = ["operations", "routing", "ledger", "receipts", "notifier", "gateway"] as const;
type ReplicatedUnit = (typeof REPLICATED)[number];
const ADDRESSES = [...REPLICATED, "admin", "routing-callbacks"] as const;
type AddressName = (typeof ADDRESSES)[number];

/** The replica count the run asks for (STACK_REPLICAS, default 1). */
function replicasOfRun(): number {
  const count = Number(process.env.STACK_REPLICAS ?? "1");
  if (!Number.isInteger(count) || count < 1) throw new Error(`STACK_REPLICAS must be a positive integer, got ${process.env.STACK_REPLICAS}`);
  return count;
}

/**
 * The whole system in this process: every unit on free ports with fresh databases of unique names
 * (dropped by stop()), against the run's real Postgres and NATS. Nothing is mocked.
 *
 * With `replicas` > 1 every unit but the sandbox runs that many times, the replicas of a unit
 * started at once on one database and one NATS namespace, as a Deployment's pods are. Peers, the
 * public and admin URLs and the sandbox's callbacks then reach a unit only through its
 * {@link ServiceAddress} (round robin per connection); `stack.services` and `stack.gateway` are
 * each unit's first replica, `stack.replicas` all of them.
 */
export async function startStack(options: StackOptions = {}) {
  const replicaCount = options.replicas ?? replicasOfRun();
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
      // Two test files run at once, each with a whole stack, on a Postgres that allows 100 connections;
      // a unit's replicas share about the pool one instance would have (and their files run one at a time).
      DB_POOL_SIZE: String(Math.ceil(5 / replicaCount)),
      ...extra,
      ...options.env?.[unit],
    };
    return options.observeEnv?.(unit, env) ?? env;
  };
  const grpc = (port: number) => `http://127.0.0.1:${port}`;
  // Replicated, every address exists (and is known) before any unit starts.
  const addresses =
    replicaCount > 1 ? (Object.fromEntries(await Promise.all(ADDRESSES.map(async (a) => [a, await ServiceAddress.start()]))) as Record<AddressName, ServiceAddress>) : undefined;
  /** Starts the unit's replicas at once, all on the one environment `env`. */
  const replicas = <U>(start: (env: NodeJS.ProcessEnv) => Promise<U>, env: NodeJS.ProcessEnv) => Promise.all(Array.from({ length: replicaCount }, () => start(env)));
  // Which address each replica's ports serve, to take them out when it stops.
  const served = new Map<object, Array<[AddressName, number]>>();
  /** Where peers reach a unit: its address with every replica's `port` behind it, or the one replica's port. */
  const serve = <U extends object>(address: AddressName, started: U[], port: (replica: U) => number) => {
    if (!addresses) return grpc(port(started[0]));
    for (const replica of started) {
      addresses[address].add(port(replica));
      served.set(replica, [...(served.get(replica) ?? []), [address, port(replica)]]);
    }
    return addresses[address].url;
  };
  // Started in dependency order, each told where its peers listen.
  // Alone, both bound only after other units started: ports no outgoing connection can take meanwhile.
  // Operations is started after the units it calls, but they replay its event record: its port is known up front.
  const [gatewayPort, operationsPort] = addresses ? [0, 0] : await freePortsForLater(2);
  const operationsUrl = addresses?.operations.url ?? grpc(operationsPort);
  const publicUrl = addresses?.gateway.url ?? `http://127.0.0.1:${gatewayPort}`;
  const sandbox = await startSandbox(unitEnv("provider-sandbox", { HTTP_PORT: "0" }));
  // Replicated, the sandbox calls back whichever routing replica the address picks, never one in particular.
  const callbacks: Record<string, string> = addresses ? { CALLBACK_BASE_URL: addresses["routing-callbacks"].url } : {};
  const [routing, ledger] = await Promise.all([
    replicas(startRouting, unitEnv("routing", { SANDBOX_URL: `http://127.0.0.1:${sandbox.port}`, ...callbacks })),
    replicas(startLedger, unitEnv("ledger", { OPERATIONS_URL: operationsUrl })),
  ]);
  serve("routing-callbacks", routing, (r) => r.healthPort);
  const peers = { ROUTING_URL: serve("routing", routing, (r) => r.grpcPort), LEDGER_URL: serve("ledger", ledger, (r) => r.grpcPort) };
  const operations = await replicas(startOperations, unitEnv("operations", { ...peers, GRPC_PORT: String(operationsPort) }));
  serve("operations", operations, (r) => r.grpcPort);
  const receipts = await replicas(startReceipts, unitEnv("receipts", { ...peers, OPERATIONS_URL: operationsUrl, PUBLIC_BASE_URL: publicUrl }));
  const receiptsUrl = serve("receipts", receipts, (r) => r.grpcPort);
  const notifier = await replicas(startNotifier, unitEnv("notifier", { RECEIPTS_URL: receiptsUrl, OPERATIONS_URL: operationsUrl, PUBLIC_BASE_URL: publicUrl }));
  const peerUrls = { ...peers, OPERATIONS_URL: operationsUrl, RECEIPTS_URL: receiptsUrl, NOTIFIER_URL: serve("notifier", notifier, (r) => r.grpcPort) };
  const gatewayEnv = unitEnv("gateway", {
    HTTP_PORT: String(gatewayPort),
    ADMIN_PORT: "0",
    ADMIN_TOKEN,
    PAYMENT_PAGE_HOST: `${publicUrl}/pay`,
    ...peerUrls,
    // Every test request comes from 127.0.0.1: files that test the per-address limit set their own.
    UNAUTHENTICATED_RATE_LIMIT_RPS: "1000",
    ADMIN_SIGN_IN_FAILURES_PER_MINUTE: "1000",
  });
  delete gatewayEnv.DATABASE_URL;
  delete databases.gateway;
  const gateway = await replicas((env) => startGateway(env), gatewayEnv);
  serve("gateway", gateway, (g) => g.httpPort);
  const adminUrl = serve("admin", gateway, (g) => g.adminPort);
  const all = { operations, routing, ledger, receipts, notifier, gateway };
  const stopped = new Set<object>();
  const stopAll = (unit: ReplicatedUnit) => Promise.all(all[unit].filter((r) => !stopped.has(r)).map((r) => stopReporting(unit, r)));

  return {
    /** The first replica of each service: every replica of a unit shares its database, so its `db` and `sql` see the unit's data. */
    services: { operations: operations[0], routing: routing[0], ledger: ledger[0], receipts: receipts[0], notifier: notifier[0] },
    /** Every replica of every replicated unit (one each unless `replicas` asked for more). */
    replicas: all,
    /** Each unit's address over its replicas; undefined with one replica (peers then call its port). */
    addresses,
    /** Where the gateway finds each service. */
    peerUrls,
    /** Each unit's database URL, for tests that must set up what no API can (a process that died mid-call). */
    databases,
    sandbox,
    gateway: gateway[0],
    publicUrl,
    namespace,
    sandboxUrl: `http://127.0.0.1:${sandbox.port}`,
    adminUrl,
    /** Takes one replica out of its addresses, as Kubernetes does with a terminating pod, and stops it. */
    async stopReplica(unit: ReplicatedUnit, index: number) {
      const replica = all[unit][index];
      for (const [address, port] of served.get(replica) ?? []) addresses?.[address].remove(port);
      stopped.add(replica);
      await stopReporting(unit, replica);
    },
    async stop() {
      await stopAll("gateway");
      await Promise.all([...REPLICATED.filter((u) => u !== "gateway").map(stopAll), stopReporting("provider-sandbox", sandbox)]);
      await Promise.all(Object.values(addresses ?? {}).map((a) => a.close()));
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
      ...stack.peerUrls,
      ...env,
    },
    log,
  );
}

/** Admin API call with the stack's token (through the stack's admin URL, or one replica's). */
export async function admin(stack: Pick<Stack, "adminUrl">, method: string, path: string, body?: unknown) {
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
