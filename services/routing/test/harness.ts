/**
 * Test stack of the routing unit: two real provider sandboxes over HTTP, the routing unit on real
 * Postgres and NATS. Provider `sandbox` (seeded, priority 100) points at sandbox A; the test
 * registers `sandbox-b` (priority 200) on sandbox B in routing's database, so failover is real.
 */
import { createClient, type Client } from "@connectrpc/connect";
import { hmacHex } from "@pgw/contracts";
import { scopedDurable, setNamespace } from "@pgw/kit/events";
import { createPeerTransport, fromConnectError } from "@pgw/kit/rpc";
import { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import { connect, type NatsConnection } from "nats";
import { randomBytes, randomUUID } from "node:crypto";
import diagnostics from "node:diagnostics_channel";
import { startSandbox } from "../../provider-sandbox/src/main";
import { dropDatabases, natsUrl, uniqueDatabaseUrl } from "../../../test/support/infra";
import { startRouting } from "../src/main";

export const SANDBOX_SECRET = "sandbox-callback-secret";
/** Sandbox B signs with its own secret, registered with provider `sandbox-b`. */
export const SANDBOX_B_SECRET = "second-sandbox-secret";

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

export interface Harness {
  client: Client<typeof RoutingService>;
  routing: Awaited<ReturnType<typeof startRouting>>;
  sandboxA: Sandbox;
  sandboxB: Sandbox;
  /** A connection in the harness's NATS namespace: publish and subscribe through scopedSubject(nc, …). */
  nc: NatsConnection;
  /** Calls a sandbox's control API; resolves to the JSON answer (throws on non-2xx). */
  control(sb: Sandbox, method: string, path: string, body?: unknown): Promise<any>;
  /** Allocates a fresh operation (allocateRequest with `over`); resolves to its operation id. */
  allocated(over?: Record<string, unknown>): Promise<string>;
  /** Default scenarios on both sandboxes. */
  resetScenarios(): Promise<void>;
  /**
   * Resolves once routing has sent a `method` request for `path` to sandbox `sb` (its headers went
   * out): routing runs in this process, and undici reports each request on its diagnostics channel.
   * Call it before the call that makes the request.
   */
  sentTo(sb: Sandbox, method: string, path: string): Promise<void>;
  /** POSTs a callback to routing as a provider would; signs with `secret` unless a signature is given. */
  postCallback(providerCode: string, body: string, opts?: { secret?: string; signature?: string }): Promise<{ status: number; json: any }>;
  stop(): Promise<void>;
}

/** The public error code of a failed RPC. */
export async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    return fromConnectError(err).code;
  }
  return "ok";
}

export async function waitFor<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 5000, what = "condition"): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startHarness(opts: { providerTimeoutMs?: number } = {}): Promise<Harness> {
  const urls = { routing: uniqueDatabaseUrl("routing"), a: uniqueDatabaseUrl("routing_sba"), b: uniqueDatabaseUrl("routing_sbb") };
  const sandboxEnv = (url: string, secret: string) => ({ DATABASE_URL: url, HTTP_PORT: "0", LOG_LEVEL: "silent", CALLBACK_SECRET: secret });
  const [sandboxA, sandboxB] = await Promise.all([startSandbox(sandboxEnv(urls.a, SANDBOX_SECRET)), startSandbox(sandboxEnv(urls.b, SANDBOX_B_SECRET))]);
  const timeoutMs = opts.providerTimeoutMs ?? 800;
  // Every stack gets its own NATS namespace: stacks sharing one NATS server must not take each other's events.
  const namespace = `t${randomBytes(5).toString("hex")}`;
  const routing = await startRouting({
    DATABASE_URL: urls.routing,
    NATS_URL: natsUrl(),
    GRPC_PORT: "0",
    HEALTH_PORT: "0",
    LOG_LEVEL: "silent",
    LOCAL_MODE: "true",
    SANDBOX_URL: `http://127.0.0.1:${sandboxA.port}`,
    PROVIDER_TIMEOUT_MS: String(timeoutMs),
    NATS_NAMESPACE: namespace,
  });

  // Test setup: a second provider (another sandbox) behind the seeded one.
  const providerB = await routing.db.provider.create({
    data: { id: randomUUID(), code: "sandbox-b", name: "Second sandbox", connector: "sandbox", baseUrl: `http://127.0.0.1:${sandboxB.port}`, callbackSecret: SANDBOX_B_SECRET, timeoutMs },
  });
  const seeded = await routing.db.route.findMany({ where: { provider: { code: "sandbox" } } });
  await routing.db.route.createMany({
    data: seeded.map(({ id: _id, createdAt: _c, providerId: _p, ...r }) => ({ ...r, id: randomUUID(), providerId: providerB.id, priority: 200 })),
  });

  const client = createClient(RoutingService, createPeerTransport(`http://127.0.0.1:${routing.grpcPort}`, { timeoutMs: 15_000 }));
  const nc = await connect({ servers: natsUrl() });
  setNamespace(nc, namespace);

  async function control(sb: Sandbox, method: string, path: string, body?: unknown) {
    const res = await fetch(`http://127.0.0.1:${sb.port}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }

  return {
    client,
    routing,
    sandboxA,
    sandboxB,
    nc,
    control,
    async allocated(over = {}) {
      const req = allocateRequest(over);
      await client.allocate(req);
      return req.operationId;
    },
    sentTo(sb, method, path) {
      const origin = `http://127.0.0.1:${sb.port}`;
      return new Promise((resolve) => {
        const seen = (message: unknown) => {
          const { request } = message as { request: { origin: string | URL; method: string; path: string } };
          if (String(request.origin).replace(/\/$/, "") !== origin || request.method !== method || request.path !== path) return;
          diagnostics.unsubscribe(UNDICI_SENT, seen);
          resolve();
        };
        diagnostics.subscribe(UNDICI_SENT, seen);
      });
    },
    async resetScenarios() {
      await Promise.all([control(sandboxA, "DELETE", "/control/scenario"), control(sandboxB, "DELETE", "/control/scenario")]);
    },
    async postCallback(providerCode, body, o = {}) {
      const signature = o.signature ?? hmacHex(o.secret ?? SANDBOX_SECRET, body);
      const res = await fetch(`http://127.0.0.1:${routing.healthPort}/callbacks/${providerCode}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-sandbox-signature": signature },
        body,
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : undefined };
    },
    async stop() {
      await routing.stop();
      await Promise.all([sandboxA.stop(), sandboxB.stop()]);
      const jsm = await nc.jetstreamManager();
      await jsm.consumers.delete("PGW", scopedDurable(nc, "routing-status")).catch(() => undefined);
      await nc.close();
      await dropDatabases(Object.values(urls));
    },
  };
}

/** undici's diagnostics channel: a request's headers were written to its connection. */
const UNDICI_SENT = "undici:client:sendHeaders";

/** An Allocate request with defaults: a RUB card payment of 100.00 settled in RUB. */
export function allocateRequest(over: Record<string, unknown> = {}) {
  return {
    operationId: randomUUID(),
    type: "payment",
    method: "WT_RUB_C2C",
    amount: "100.00",
    currency: "RUB",
    settlementCurrency: "RUB",
    clientId: "client-1",
    budgetMs: 5000,
    ...over,
  };
}
