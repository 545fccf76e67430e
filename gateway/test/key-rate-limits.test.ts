/**
 * API keys' buckets kept in step across gateway replicas over a real NATS (decisions/0017): each
 * replica takes from its copy what the others report admitting, and never counts its own twice.
 */
import { connectNats, setNamespace } from "@pgw/kit/events";
import { createLogger } from "@pgw/kit/runtime";
import { waitFor } from "@pgw/kit/testing";
import type { NatsConnection } from "nats";
import { randomBytes } from "node:crypto";
import { Registry } from "prom-client";
import { KeyRateLimits } from "../src/auth/key-rate-limits";
import { natsUrl } from "../../test/support/infra";

const log = createLogger("key-rate-limits-test", "silent");
let nc: NatsConnection;
const replicas: { limits: KeyRateLimits; registry: Registry }[] = [];

beforeAll(async () => {
  nc = await connectNats(natsUrl(), "key-rate-limits-test", log);
  setNamespace(nc, `t${randomBytes(4).toString("hex")}`);
});
afterEach(() => {
  for (const r of replicas.splice(0)) r.limits.stop();
});
afterAll(() => nc.close());

/** A replica on the shared connection whose clock stands still: buckets refill only when a test says so. */
function replica() {
  const registry = new Registry();
  const limits = new KeyRateLimits(nc, { registry, log, now: () => 0 });
  replicas.push({ limits, registry });
  return { limits, peerRequests: async () => (await registry.getSingleMetric("gateway_key_rate_peer_requests_total")!.get()).values[0]?.value ?? 0 };
}

const take = (limits: KeyRateLimits, times: number) => Array.from({ length: times }, () => limits.take("key-1", 10).allowed);

it("takes from each replica's bucket what the other admitted, and its own requests only once", async () => {
  const [a, b] = [replica(), replica()];
  expect(take(a.limits, 3)).toEqual([true, true, true]);
  expect(take(b.limits, 1)).toEqual([true]);
  // Both subscriptions share the connection: once both counted the other's report, each has seen its own too.
  await waitFor(async () => (await a.peerRequests()) === 1 && (await b.peerRequests()) === 3, 5_000, "each replica's report reaching the other");
  // A burst of 20 less the 4 admitted in all, less this one (each replica's, not yet reported).
  expect(a.limits.take("key-1", 10)).toMatchObject({ allowed: true, remaining: 15 });
  expect(b.limits.take("key-1", 10)).toMatchObject({ allowed: true, remaining: 15 });
});

it("refuses on a replica whose bucket the other emptied, though it admitted nothing itself", async () => {
  const [a, b] = [replica(), replica()];
  expect(take(a.limits, 21)).toEqual([...Array(20).fill(true), false]);
  await waitFor(async () => (await b.peerRequests()) === 20, 5_000, "the report of 20 reaching the other replica");
  expect(b.limits.take("key-1", 10)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
});
