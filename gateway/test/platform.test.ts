import { grpcHealthStatus } from "../../test/support/grpc-health-client";
import { rawStatus, request } from "../../test/support/http";
import { metricValue } from "../../test/support/metrics";
import { pollUntil } from "../../test/support/poll";
import { admin, ADMIN_TOKEN, createShopWithKey, startGatewayReplica, startStack, type Stack } from "../../test/support/stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 120_000);
afterAll(() => stack?.stop());

const get = (path: string, headers: Record<string, string> = {}) => request(stack.publicUrl + path, { headers });

describe("probes and gRPC health", () => {
  it("answers 204 on every probe of the gateway's public and health ports and of every service", async () => {
    const ports = [stack.gateway.httpPort, stack.gateway.healthPort, ...Object.values(stack.services).map((s) => s.healthPort), stack.sandbox.port];
    for (const port of ports) {
      for (const probe of ["/livez", "/healthz", "/readyz"]) {
        const res = await request(`http://127.0.0.1:${port}${probe}`);
        expect({ port, probe, status: res.status, body: res.body }).toEqual({ port, probe, status: 204, body: null });
      }
    }
  });

  it("serves Prometheus metrics on every health port", async () => {
    const res = await request(`http://127.0.0.1:${stack.services.operations.healthPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.body).toContain("grpc_server_handling_seconds");
    expect(res.body).toContain("process_cpu_seconds_total");
  });

  it("answers SERVING to a plain @grpc/grpc-js health client on every service", async () => {
    for (const [name, unit] of Object.entries(stack.services)) {
      expect({ name, status: await grpcHealthStatus(`127.0.0.1:${unit.grpcPort}`) }).toEqual({ name, status: "SERVING" });
    }
    await expect(grpcHealthStatus(`127.0.0.1:${stack.services.operations.grpcPort}`, "pgw.operations.v1.AccountsService")).resolves.toBe("SERVING");
    await expect(grpcHealthStatus(`127.0.0.1:${stack.services.operations.grpcPort}`, "no.such.Service")).rejects.toMatchObject({ code: 5 });
  });
});

describe("X-API-Key authentication", () => {
  it("accepts an admin-issued key, whatever the header's case, and answers zero balances for a new shop", async () => {
    const { apiKey } = await createShopWithKey(stack);
    for (const header of ["X-API-Key", "x-api-key", "X-API-KEY"]) {
      const res = await get("/v1/balances", { [header]: apiKey });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        balances: [
          { currency: "RUB", balance: "0.00", current_minus: "0.00", reserved: "0.00" },
          { currency: "USDT", balance: "0.000000", current_minus: "0.000000", reserved: "0.000000" },
        ],
      });
    }
  });

  it("answers 401 with the two messages of docs/api.md, Authentication", async () => {
    const missing = await get("/v1/balances");
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: { code: "unauthorized", message: "x-api-key header is required", details: [] } });
    const unknown = await get("/v1/balances", { "X-API-Key": "pgw_" + "A".repeat(43) });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.message).toBe("invalid api key");
    // RFC 9110: a 401 names how to authenticate.
    expect([missing.headers["www-authenticate"], unknown.headers["www-authenticate"]]).toEqual(['ApiKey header="X-API-Key"', 'ApiKey header="X-API-Key"']);
    expect((await request(stack.adminUrl + "/admin/api/routes")).headers["www-authenticate"]).toBe('Bearer realm="admin"');
  });

  it("refuses malformed, huge and non-ASCII keys with 401, never 500", async () => {
    for (const key of ["short", "pgw_" + "A".repeat(42) + "!", "x".repeat(200_000), "pgw_é" + "A".repeat(42)]) {
      const res = await get("/v1/balances", { "X-API-Key": key });
      expect({ len: key.length, status: res.status, message: res.body.error.message }).toEqual({ len: key.length, status: 401, message: "invalid api key" });
    }
    const utf8 = Buffer.concat([Buffer.from("GET /v1/balances HTTP/1.1\r\nHost: x\r\nX-API-Key: pgw_"), Buffer.from("ключ".repeat(11), "utf8"), Buffer.from("\r\nConnection: close\r\n\r\n")]);
    expect(await rawStatus(stack.gateway.httpPort, utf8)).toBe(401);
  });

  it("authenticates before parsing the body or matching the route", async () => {
    const res = await request(stack.publicUrl + "/v1/payment", { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe("x-api-key header is required");
    expect((await get("/v1/no-such-endpoint")).status).toBe(401);
  });

  it("reads /v1 in any case as the authenticated API: no spelling reaches a handler without a key", async () => {
    const { apiKey } = await createShopWithKey(stack);
    for (const path of ["/V1/banks?currency=RUB", "/V1/balances", "/v1/BALANCES", "/V1/payout"]) {
      const anonymous = await get(path);
      expect({ path, status: anonymous.status, code: anonymous.body.error.code }).toEqual({ path, status: 401, code: "unauthorized" });
      // Paths match as written: with a key, another spelling is simply not an endpoint.
      const keyed = await get(path, { "X-API-Key": apiKey });
      expect({ path, status: keyed.status, code: keyed.body.error.code }).toEqual({ path, status: 404, code: "not_found" });
    }
  });

  it("refuses a revoked key at once on the gateway that revoked it, and on every other replica within a second", async () => {
    const { apiKey, apiKeyId } = await createShopWithKey(stack);
    const replica = await startGatewayReplica(stack);
    try {
      const replicaUrl = `http://127.0.0.1:${replica.httpPort}/v1/balances`;
      // Both replicas now hold the key in their 30 s cache: only the revocation event can evict it.
      expect((await get("/v1/balances", { "X-API-Key": apiKey })).status).toBe(200);
      expect((await request(replicaUrl, { headers: { "X-API-Key": apiKey } })).status).toBe(200);

      const revoked = await admin(stack, "POST", `/admin/api/api-keys/${apiKeyId}/revoke`);
      expect(revoked.status).toBe(200);
      expect(revoked.body.revoked_at).toEqual(expect.any(String));
      // No wait: the revocation event may still be on its way, but this gateway evicted the key itself.
      expect((await get("/v1/balances", { "X-API-Key": apiKey })).status).toBe(401);
      const status = await pollUntil(async () => (await request(replicaUrl, { headers: { "X-API-Key": apiKey } })).status, (s) => s === 401, 1000, 10);
      expect(status).toBe(401);
    } finally {
      await replica.stop();
    }
  });

  it("limits a key's requests to its shop's rate with 429, Retry-After and RateLimit headers", async () => {
    const { apiKey } = await createShopWithKey(stack, { rate_limit_rps: 1 });
    const statuses: number[] = [];
    let limited;
    for (let i = 0; i < 4; i++) {
      const res = await get("/v1/balances", { "X-API-Key": apiKey });
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses.slice(0, 2)).toEqual([200, 200]); // burst of twice the rate
    expect(statuses).toContain(429);
    expect(limited!.body.error.code).toBe("rate_limited");
    expect(Number(limited!.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(limited!.headers["ratelimit-limit"]).toBe("2");
    expect(limited!.headers["ratelimit-remaining"]).toBe("0");
  });

  it("gives each API key a bucket of its own at its shop's rate: a key that used its burst up does not hold back the shop's other key", async () => {
    const { apiKey, shopId } = await createShopWithKey(stack, { rate_limit_rps: 1 });
    const second = (await admin(stack, "POST", `/admin/api/shops/${shopId}/api-keys`, { label: "another" })).body.api_key as string;
    const burst = async (key: string) => {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await get("/v1/balances", { "X-API-Key": key })).status);
      return statuses;
    };
    // A burst of two each, then 429 (a token comes back only after a second at 1/s).
    const first = await burst(apiKey);
    expect(first.slice(0, 2)).toEqual([200, 200]);
    expect(first).toContain(429);
    const other = await burst(second);
    expect(other.slice(0, 2)).toEqual([200, 200]);
    expect(other).toContain(429);
  });

  it("applies a shop's new rate limit from the next request, though its key is cached", async () => {
    const { apiKey, shopId } = await createShopWithKey(stack, { rate_limit_rps: 1 });
    const burst = async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await get("/v1/balances", { "X-API-Key": apiKey })).status);
      return statuses;
    };
    expect(await burst()).toContain(429);
    expect((await admin(stack, "PATCH", `/admin/api/shops/${shopId}`, { rate_limit_rps: 1000 })).status).toBe(200);
    expect(await burst()).toEqual([200, 200, 200, 200, 200, 200]);
  });
});

describe("an API key's rate limit across gateway replicas", () => {
  type Replica = Awaited<ReturnType<typeof startGatewayReplica>>;
  let replica: Replica;
  beforeEach(async () => {
    replica = await startGatewayReplica(stack);
  });
  afterEach(() => replica.stop());

  const balancesUrl = (port: number) => `http://127.0.0.1:${port}/v1/balances`;

  /** Sends `perSecond` requests a second for `ms`, in turn to each URL; answers each status by URL index, and how long sending took. */
  async function offer(urls: string[], apiKey: string, perSecond: number, ms: number) {
    const answers: Promise<{ to: number; status: number }>[] = [];
    const start = Date.now();
    for (let i = 0; Date.now() - start < ms; i++) {
      const to = i % urls.length;
      answers.push(request(urls[to], { headers: { "X-API-Key": apiKey } }).then((res) => ({ to, status: res.status })));
      await new Promise((r) => setTimeout(r, Math.max(0, start + ((i + 1) * 1000) / perSecond - Date.now())));
    }
    const sentForMs = Date.now() - start;
    return { answers: await Promise.all(answers), sentForMs };
  }

  it("admits the key's rate in total, within 10 %, while two replicas share its traffic", async () => {
    const rps = 20;
    const { apiKey } = await createShopWithKey(stack, { rate_limit_rps: rps });
    const urls = [balancesUrl(stack.gateway.httpPort), balancesUrl(replica.httpPort)];
    await offer(urls, apiKey, rps * 3, 2_000); // uses up the burst: from here on, only the refill passes
    const { answers, sentForMs } = await offer(urls, apiKey, rps * 3, 5_000);
    const admitted = answers.filter((a) => a.status === 200);
    const expected = (rps * sentForMs) / 1000;
    expect(admitted.length).toBeGreaterThanOrEqual(expected * 0.9);
    expect(admitted.length).toBeLessThanOrEqual(expected * 1.1);
    // Each replica admitted a share (neither admitted alone); both at the full rate is ruled out by
    // the total above. How the shares split depends on when each replica's reports arrive, so a
    // share is only required to be a fifth.
    for (const to of [0, 1]) expect(admitted.filter((a) => a.to === to).length).toBeGreaterThanOrEqual(expected * 0.2);
    expect(answers.filter((a) => a.status !== 200).every((a) => a.status === 429)).toBe(true);
  }, 30_000);

  it("tells on one replica, in RateLimit-Remaining, what the other admitted", async () => {
    const { apiKey } = await createShopWithKey(stack, { rate_limit_rps: 1 });
    const headers = { "X-API-Key": apiKey };
    const first = await request(balancesUrl(stack.gateway.httpPort), { headers });
    const second = await request(balancesUrl(stack.gateway.httpPort), { headers });
    expect([first.status, first.headers["ratelimit-remaining"], second.status, second.headers["ratelimit-remaining"]]).toEqual([200, "1", 200, "0"]);
    // At least these two reported (a report of the gateway's earlier traffic may come in too).
    const reported = await pollUntil(() => metricValue(replica.healthPort, "gateway_key_rate_peer_requests_total"), (n) => n >= 2, 5_000);
    expect(reported).toBeGreaterThanOrEqual(2);
    // The replica admitted none of the key's requests, yet its copy of the bucket is as empty.
    const onReplica = await request(balancesUrl(replica.httpPort), { headers });
    expect({ status: onReplica.status, remaining: onReplica.headers["ratelimit-remaining"] }).toEqual({ status: 429, remaining: "0" });
  });
});

describe("errors and the admin API", () => {
  it("answers an unknown path with 404 and the error body", async () => {
    const res = await get("/nope");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: "not_found", message: "not found", details: [] } });
  });

  it("sends the console to its sign-in page without a session; the API needs the token", async () => {
    const console = await request(stack.adminUrl + "/admin/merchants");
    expect(console.status).toBe(302);
    expect(console.headers.location).toBe("/admin/sign-in");
    const signIn = await request(stack.adminUrl + "/admin/sign-in");
    expect(signIn.status).toBe(200);
    expect(signIn.headers["content-type"]).toMatch(/text\/html/);
    expect(signIn.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(signIn.body).toContain('action="/admin/sign-in"');
    expect((await request(stack.adminUrl + "/admin/api/routes")).status).toBe(401);
  });

  it("requires the admin token", async () => {
    const res = await request(stack.adminUrl + "/admin/api/merchants", { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthorized");
    const wrong = await request(stack.adminUrl + "/admin/api/merchants", { method: "POST", body: "{}", headers: { authorization: "Bearer wrong", "content-type": "application/json" } });
    expect(wrong.status).toBe(401);
    const lowerCaseScheme = await request(stack.adminUrl + "/admin/api/merchants", { method: "POST", body: JSON.stringify({ name: "M" }), headers: { authorization: `bearer ${ADMIN_TOKEN}`, "content-type": "application/json" } });
    expect(lowerCaseScheme.status).toBe(201); // the scheme is case-insensitive (RFC 7235)
    for (const path of ["/ADMIN/API/merchants", "/Admin/Api/merchants", "/admin/API/merchants"]) {
      const other = await request(stack.adminUrl + path, { method: "POST", body: JSON.stringify({ name: "M" }), headers: { "content-type": "application/json" } });
      expect({ path, status: other.status }).toEqual({ path, status: 401 });
    }
  });

  it("refuses an admin body of another media type with 415, as the public API does", async () => {
    const name = `plain-${Date.now()}`;
    const res = await request(stack.adminUrl + "/admin/api/merchants", { method: "POST", body: JSON.stringify({ name }), headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "text/plain" } });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe("unsupported_media_type");
  });

  it("validates admin input with details and changes nothing", async () => {
    const merchant = await admin(stack, "POST", "/admin/api/merchants", { name: "" });
    expect(merchant.status).toBe(400);
    expect(merchant.body.error.details).toEqual([{ field: "name", issue: expect.any(String) }]);
    const { body: m } = await admin(stack, "POST", "/admin/api/merchants", { name: "M" });
    const shop = await admin(stack, "POST", "/admin/api/shops", { merchant_id: m.id, name: "S", settlement_currency: "EUR", rate_limit_rps: 0 });
    expect(shop.status).toBe(400);
    expect(shop.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(["rate_limit_rps", "settlement_currency"]);
    expect((await admin(stack, "POST", "/admin/api/shops", { merchant_id: "00000000-0000-4000-8000-000000000000", name: "S" })).status).toBe(404);
    expect((await admin(stack, "POST", "/admin/api/shops/not-a-uuid/api-keys", {})).status).toBe(400);
    // A body that is no JSON object gets the public API's answer.
    for (const body of [["M"], "M", null]) {
      const notObject = await admin(stack, "POST", "/admin/api/merchants", body);
      expect(notObject.status).toBe(400);
      expect(notObject.body.error).toEqual({ code: "validation_error", message: "request body must be a JSON object", details: [{ field: "body", issue: "must be a JSON object" }] });
    }
  });

  it("refuses to move a shop to another merchant, and takes a shop read back with its own merchant_id", async () => {
    const { body: first } = await admin(stack, "POST", "/admin/api/merchants", { name: "M1" });
    const { body: second } = await admin(stack, "POST", "/admin/api/merchants", { name: "M2" });
    const { body: shop } = await admin(stack, "POST", "/admin/api/shops", { merchant_id: first.id, name: "S" });
    const moved = await admin(stack, "PATCH", `/admin/api/shops/${shop.id}`, { merchant_id: second.id, name: "renamed" });
    expect(moved.status).toBe(400);
    expect(moved.body.error.details).toEqual([{ field: "merchant_id", issue: "cannot be changed" }]);
    expect((await admin(stack, "GET", `/admin/api/shops/${shop.id}`)).body).toMatchObject({ merchant_id: first.id, name: "S" });
    const { webhook_secret: _secret, created_at: _created, id: _id, ...readBack } = shop;
    const resent = await admin(stack, "PATCH", `/admin/api/shops/${shop.id}`, { ...readBack, name: "renamed" });
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ merchant_id: first.id, name: "renamed" });
  });

  it("takes an empty webhook_url as no URL (null), never stored as an empty string", async () => {
    const { body: m } = await admin(stack, "POST", "/admin/api/merchants", { name: "M" });
    expect((await admin(stack, "POST", "/admin/api/shops", { merchant_id: m.id, name: "S", webhook_url: "" })).body.webhook_url).toBeNull();
    const shop = await admin(stack, "POST", "/admin/api/shops", { merchant_id: m.id, name: "S", webhook_url: "http://127.0.0.1:9/hook" });
    expect(shop.body.webhook_url).toBe("http://127.0.0.1:9/hook");
    expect((await admin(stack, "PATCH", `/admin/api/shops/${shop.body.id}`, { webhook_url: "" })).body.webhook_url).toBeNull();
  });

  it("shows a shop's overdraft limit at its settlement currency's scale, as it is stored and reserved against", async () => {
    const { body: m } = await admin(stack, "POST", "/admin/api/merchants", { name: "M" });
    const usdt = await admin(stack, "POST", "/admin/api/shops", { merchant_id: m.id, name: "S", settlement_currency: "USDT", overdraft_limit: "100.123456" });
    expect(usdt.body.overdraft_limit).toBe("100.123456");
    const rub = await admin(stack, "POST", "/admin/api/shops", { merchant_id: m.id, name: "S", overdraft_limit: "250.5" });
    expect(rub.body).toMatchObject({ settlement_currency: "RUB", overdraft_limit: "250.50" });
  });

  it("refuses an overdraft limit with more places than the settlement currency has, and a currency change that leaves a non-zero limit unstated", async () => {
    const { body: m } = await admin(stack, "POST", "/admin/api/merchants", { name: "M" });
    const tooFine = await admin(stack, "POST", "/admin/api/shops", { merchant_id: m.id, name: "S", overdraft_limit: "0.009" });
    expect(tooFine.status).toBe(400);
    expect(tooFine.body.error.details).toEqual([{ field: "overdraft_limit", issue: expect.stringContaining("at most 2 places") }]);
    const { body: shop } = await admin(stack, "POST", "/admin/api/shops", { merchant_id: m.id, name: "S", overdraft_limit: "1000" });
    expect((await admin(stack, "PATCH", `/admin/api/shops/${shop.id}`, { overdraft_limit: "10.123" })).status).toBe(400);
    const unstated = await admin(stack, "PATCH", `/admin/api/shops/${shop.id}`, { settlement_currency: "USDT" });
    expect(unstated.status).toBe(400);
    expect(unstated.body.error.details).toEqual([{ field: "overdraft_limit", issue: expect.stringContaining("1000 is in RUB") }]);
    expect((await admin(stack, "GET", `/admin/api/shops/${shop.id}`)).body).toMatchObject({ settlement_currency: "RUB", overdraft_limit: "1000.00" });
    const restated = await admin(stack, "PATCH", `/admin/api/shops/${shop.id}`, { settlement_currency: "USDT", overdraft_limit: "10.123456" });
    expect(restated.body).toMatchObject({ settlement_currency: "USDT", overdraft_limit: "10.123456" });
  });

  it("answers 400, not 500, for a rate limit beyond the wire's integer range, and takes an empty JSON body as no body", async () => {
    const { shopId } = await createShopWithKey(stack);
    const huge = await admin(stack, "PATCH", `/admin/api/shops/${shopId}`, { rate_limit_rps: 2 ** 31 });
    expect(huge.status).toBe(400);
    expect(huge.body.error.details).toEqual([{ field: "rate_limit_rps", issue: expect.any(String) }]);
    const key = await admin(stack, "POST", `/admin/api/shops/${shopId}/api-keys`); // JSON content type, no body
    expect(key.status).toBe(201);
    expect(key.body.api_key).toMatch(/^pgw_/);
  });

  it("serves the console page unframeable with a strict policy, and marks every admin API answer (keys, secrets) not to be cached", async () => {
    const page = await request(stack.adminUrl + "/admin/sign-in");
    expect(page.status).toBe(200);
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(page.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(page.headers["cache-control"]).toBe("no-store");
    expect([page.headers["x-frame-options"], page.headers["x-content-type-options"]]).toEqual(["DENY", "nosniff"]);
    const { shopId } = await createShopWithKey(stack);
    const key = await request(`${stack.adminUrl}/admin/api/shops/${shopId}/api-keys`, { method: "POST", headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(key.status).toBe(201);
    expect(key.headers["cache-control"]).toBe("no-store");
  });

  it("issues keys with a visible prefix and 32+ random bytes, shows the plaintext once and lists without it", async () => {
    const { shopId, apiKey, apiKeyId } = await createShopWithKey(stack);
    expect(apiKey).toMatch(/^pgw_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(apiKey.slice(4), "base64url").length).toBeGreaterThanOrEqual(32);
    const list = await admin(stack, "GET", `/admin/api/shops/${shopId}/api-keys`);
    expect(list.body.api_keys).toEqual([expect.objectContaining({ id: apiKeyId, prefix: apiKey.slice(0, 12), revoked_at: null })]);
    expect(JSON.stringify(list.body)).not.toContain(apiKey);
    const stored = await stack.services.operations.db.apiKey.findUniqueOrThrow({ where: { id: apiKeyId } });
    expect(stored.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(apiKey.slice(12));
  });
});
