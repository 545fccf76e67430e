import { randomBytes } from "node:crypto";
import { request } from "../../test/support/http";
import { metricValue } from "../../test/support/metrics";
import { capturedLog } from "../../test/support/log-lines";
import { admin, ADMIN_TOKEN, createShopWithKey, startGatewayReplica, startStack, type Stack } from "../../test/support/stack";

// Each client address may have 2 keys looked up in vain a second, with a burst of 4. 127.0.0.1 is the trusted proxy,
// so its requests count against the address its X-Forwarded-For names; 127.0.0.2 and up are clients.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { gateway: { UNAUTHENTICATED_RATE_LIMIT_RPS: "2", API_KEY_UNKNOWN_TTL_MS: "600000", TRUSTED_PROXIES: "127.0.0.1" } } });
}, 120_000);
afterAll(() => stack?.stop());

const madeUpKey = () => `pgw_${randomBytes(32).toString("base64url")}`;
const balances = (headers: Record<string, string>, localAddress?: string) => request(`${stack.publicUrl}/v1/balances`, { headers, localAddress });
/** How often operations has been asked to resolve a key. */
const resolveCalls = () => metricValue(stack.services.operations.healthPort, "grpc_server_handling_seconds_count", { method: "pgw.operations.v1.AccountsService/ResolveApiKey" });

describe("made-up and revoked keys", () => {
  it("ask operations once per key per TTL, however often and from however many addresses they are sent", async () => {
    const keys = Array.from({ length: 20 }, madeUpKey);
    const before = await resolveCalls();
    for (let round = 0; round < 5; round++) {
      // One request per address, so no address runs out of its budget: only the cache can spare the calls.
      const answers = await Promise.all(keys.map((key, i) => balances({ "X-API-Key": key, "X-Forwarded-For": `198.51.100.${round * 20 + i + 1}` })));
      expect(answers.map((a) => [a.status, a.body.error.message])).toEqual(Array(20).fill([401, "invalid api key"]));
    }
    expect((await resolveCalls()) - before).toBe(20);
  });

  it("refuse a revoked key without asking operations again, while a key issued after it works at once", async () => {
    const { apiKey, apiKeyId, shopId } = await createShopWithKey(stack);
    const from = { "X-Forwarded-For": "198.51.100.200" };
    expect((await balances({ "X-API-Key": apiKey, ...from })).status).toBe(200);
    expect((await admin(stack, "POST", `/admin/api/api-keys/${apiKeyId}/revoke`)).status).toBe(200);
    const before = await resolveCalls();
    const refused = [];
    for (let i = 0; i < 3; i++) refused.push((await balances({ "X-API-Key": apiKey, "X-Forwarded-For": `198.51.100.${201 + i}` })).status);
    expect(refused).toEqual([401, 401, 401]);
    expect((await resolveCalls()) - before).toBe(1);
    const issued = await admin(stack, "POST", `/admin/api/shops/${shopId}/api-keys`, { label: "next" });
    expect((await balances({ "X-API-Key": issued.body.api_key, ...from })).status).toBe(200);
  });
});

describe("requests without a valid key, per client address", () => {
  it("get 429 with Retry-After past the address's burst, without reaching operations; another address still gets 401 at once", async () => {
    const { apiKey } = await createShopWithKey(stack);
    expect((await balances({ "X-API-Key": apiKey }, "127.0.0.4")).status).toBe(200); // now cached on the gateway
    const before = await resolveCalls();
    const flood = [];
    // A client's own X-Forwarded-For is not believed: 127.0.0.2 is no trusted proxy.
    for (let i = 0; i < 12; i++) flood.push(await balances({ "X-API-Key": madeUpKey(), "X-Forwarded-For": `203.0.113.${i}` }, "127.0.0.2"));
    expect(flood.slice(0, 4).map((r) => r.status)).toEqual([401, 401, 401, 401]);
    const limited = flood.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(7); // at most one token comes back while they run
    expect(limited[0].body.error).toEqual({ code: "rate_limited", message: "too many requests without a valid api key from this address", details: [] });
    expect(Number(limited[0].headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((await resolveCalls()) - before).toBeLessThanOrEqual(5);
    // A request with no key at all needs no lookup: it is the contract's 401 even from this address.
    const noKey = await balances({}, "127.0.0.2");
    expect([noKey.status, noKey.body.error.message]).toEqual([401, "x-api-key header is required"]);

    const started = Date.now();
    const other = await balances({ "X-API-Key": madeUpKey() }, "127.0.0.3");
    expect([other.status, other.body.error.message]).toEqual([401, "invalid api key"]);
    expect(Date.now() - started).toBeLessThan(1000);
    // A key the gateway knows costs the flooding address nothing.
    expect((await balances({ "X-API-Key": apiKey }, "127.0.0.2")).status).toBe(200);
  });

  it("are counted against the address a trusted proxy appended to X-Forwarded-For, not the one a client wrote", async () => {
    const flood = [];
    for (let i = 0; i < 8; i++) flood.push((await balances({ "X-API-Key": madeUpKey(), "X-Forwarded-For": "203.0.113.50" })).status);
    expect(flood).toContain(429);
    expect((await balances({ "X-API-Key": madeUpKey(), "X-Forwarded-For": "203.0.113.51" })).status).toBe(401);
    // The client wrote 203.0.113.51; the proxy appended the address it saw, 203.0.113.50.
    expect((await balances({ "X-API-Key": madeUpKey(), "X-Forwarded-For": "203.0.113.51, 203.0.113.50" })).status).toBe(429);
  });

  it("never include a missing header, a malformed key or a key just found unknown: those stay 401 from one address, and a new key from it works", async () => {
    const from = { "X-Forwarded-For": "203.0.113.70" };
    const unknown = madeUpKey();
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await balances(from));
    for (let i = 0; i < 10; i++) answers.push(await balances({ "X-API-Key": "not-a-key", ...from }));
    for (let i = 0; i < 10; i++) answers.push(await balances({ "X-API-Key": unknown, ...from }));
    expect(answers.map((a) => [a.status, a.body.error.message])).toEqual([
      ...Array(10).fill([401, "x-api-key header is required"]),
      ...Array(20).fill([401, "invalid api key"]),
    ]);
    const { apiKey } = await createShopWithKey(stack);
    expect((await balances({ "X-API-Key": apiKey, ...from })).status).toBe(200);
  });

  it("write their access line at debug, none at info", async () => {
    const { log, lines } = capturedLog("gateway");
    const replica = await startGatewayReplica(stack, { UNAUTHENTICATED_RATE_LIMIT_RPS: "1" }, log);
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await request(`http://127.0.0.1:${replica.httpPort}/v1/balances`, { headers: { "X-API-Key": madeUpKey() } })).status);
      expect(statuses).toEqual([401, 401, 429]);
      const access = (await lines()).filter((line) => line.msg === "http request");
      expect(access.map((line) => [line.level, line.status])).toEqual([
        [20, 401],
        [20, 401],
        [20, 429],
      ]);
    } finally {
      await replica.stop();
    }
  });

  it("are counted in gateway_auth_refusals_total, and as unmatched 4xx requests", async () => {
    const refusals = (code: string) => metricValue(stack.gateway.healthPort, "gateway_auth_refusals_total", { api: "public", code });
    const answered = (statusClass: string) => metricValue(stack.gateway.healthPort, "http_requests_total", { server: "public", route: "unmatched", status_class: statusClass });
    const rateLimited = () => metricValue(stack.gateway.healthPort, "gateway_rate_limited_requests_total", { server: "public" });
    const [unauthorized, limited, fourXx, all429] = [await refusals("unauthorized"), await refusals("rate_limited"), await answered("4xx"), await rateLimited()];
    for (let i = 0; i < 6; i++) await balances({ "X-API-Key": madeUpKey(), "X-Forwarded-For": "203.0.113.60" });
    const counted = { unauthorized: (await refusals("unauthorized")) - unauthorized, limited: (await refusals("rate_limited")) - limited };
    // A burst of 4; a fifth token comes back only if the six took half a second.
    expect(counted.unauthorized + counted.limited).toBe(6);
    expect(counted.limited).toBeGreaterThanOrEqual(1);
    // Refused before any route matched, they count as `unmatched` requests; the 429s also as rate-limited ones.
    expect((await answered("4xx")) - fourXx).toBe(6);
    expect((await rateLimited()) - all429).toBe(counted.limited);
  });
});

describe("admin sign-in", () => {
  it("answers 429 to an address past its failed sign-ins, even with the right token, logs each failure without what was presented, and lets another address in", async () => {
    const { log, lines } = capturedLog("gateway", "info");
    const replica = await startGatewayReplica(stack, { ADMIN_SIGN_IN_FAILURES_PER_MINUTE: "3" }, log);
    const routes = (authorization: string, localAddress = "127.0.0.2") =>
      request(`http://127.0.0.1:${replica.adminPort}/admin/api/routes`, { headers: { authorization }, localAddress });
    try {
      const guesses = [];
      for (let i = 0; i < 6; i++) guesses.push(await routes(`Bearer guess-${i}-0123456789`));
      expect(guesses.map((g) => g.status)).toEqual([401, 401, 401, 429, 429, 429]);
      expect(guesses[3].body.error).toEqual({ code: "rate_limited", message: "too many failed sign-ins from this address", details: [] });
      expect(Number(guesses[3].headers["retry-after"])).toBeGreaterThanOrEqual(1);
      // Locked out, the right token is refused too: a right guess looks like a wrong one.
      expect((await routes(`Bearer ${ADMIN_TOKEN}`)).status).toBe(429);
      expect((await routes(`Bearer ${ADMIN_TOKEN}`, "127.0.0.3")).status).toBe(200);

      const written = await lines();
      const failures = written.filter((line) => line.msg === "admin sign-in failed");
      expect(failures.map((line) => [line.level, line.client_address, line.credential])).toEqual(Array(3).fill([40, "127.0.0.2", "wrong"]));
      expect(JSON.stringify(written)).not.toContain("guess-");
      // The refusals' access lines are at debug: nothing else about them at info.
      expect(written.filter((line) => line.msg === "http request" && line.status !== 200)).toEqual([]);
    } finally {
      await replica.stop();
    }
  });
});
