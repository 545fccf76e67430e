import { sha256Hex } from "@pgw/contracts";
import { createLogger, unitMetricsRegistry } from "@pgw/kit/runtime";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "../../test/support/http";
import { admin, ADMIN_TOKEN, createShopWithKey, startStack, type Stack } from "../../test/support/stack";
import { createAdminApp } from "../src/admin/app";
import { AuthRefusals } from "../src/auth/auth-refusals";
import { ClientAttempts } from "../src/auth/client-attempts";
import { KeyCache } from "../src/auth/key-cache";
import { createGatewayClients } from "../src/clients";
import { loadGatewayConfig } from "../src/config";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 120_000);
afterAll(() => stack?.stop());

/** An admin API call on `base` (the stack's admin port unless given) with `token`. */
const call = (token: string, method: string, path: string, body?: unknown, base = stack.adminUrl) =>
  request(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "x-admin-actor": "mallory" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

let names = 0;
/** A new operator with a name of its own: its id and token. */
async function newOperator(prefix = "op") {
  const created = await admin(stack, "POST", "/admin/api/operators", { name: `${prefix}-${++names}` });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, name: created.body.name as string, token: created.body.token as string };
}

describe("operators", () => {
  it("get a token shown once and stored only as its SHA-256, and act under their own name whatever X-Admin-Actor says", async () => {
    const created = await admin(stack, "POST", "/admin/api/operators", { name: "alice@ops" });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), name: "alice@ops", created_by: "admin", created_at: expect.any(String), revoked_at: null, token: expect.stringMatching(/^pgwop_[A-Za-z0-9_-]{43}$/) });
    const { token } = created.body;
    const listed = await call(token, "GET", "/admin/api/operators");
    expect(listed.body.operators).toContainEqual({ id: created.body.id, name: "alice@ops", created_by: "admin", created_at: created.body.created_at, revoked_at: null });
    expect(JSON.stringify(listed.body)).not.toContain(token);
    const stored = await stack.services.operations.db.operator.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(stored.tokenHash).toBe(sha256Hex(token));

    // The audit records the credential's operator: here a ledger adjustment's actor.
    const { shopId } = await createShopWithKey(stack);
    const adjusted = await call(token, "POST", `/admin/api/shops/${shopId}/adjustments`, { currency: "RUB", amount: "10.00", reason: "test credit" });
    expect(adjusted.status).toBe(201);
    const entry = await stack.services.ledger.sql.selectFrom("journalEntries").select("actor").where("id", "=", adjusted.body.entry_id).executeTakeFirst();
    expect(entry?.actor).toBe("alice@ops");
    // An operator it creates is recorded as created by it.
    expect((await call(token, "POST", "/admin/api/operators", { name: "bob" })).body.created_by).toBe("alice@ops");
  });

  it("lose access at once when their token is rotated or they are revoked", async () => {
    const operator = await newOperator();
    const rotated = await call(operator.token, "POST", `/admin/api/operators/${operator.id}/token`);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ id: operator.id, name: operator.name, token: expect.stringMatching(/^pgwop_/) });
    expect((await call(operator.token, "GET", "/admin/api/routes")).status).toBe(401);
    expect((await call(rotated.body.token, "GET", "/admin/api/routes")).status).toBe(200);

    const revoked = await admin(stack, "POST", `/admin/api/operators/${operator.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    const refused = await call(rotated.body.token, "GET", "/admin/api/routes");
    expect([refused.status, refused.body.error.message]).toEqual([401, "an operator token is required"]);
    expect((await admin(stack, "POST", `/admin/api/operators/${operator.id}/revoke`)).status).toBe(404);
    expect((await admin(stack, "POST", `/admin/api/operators/${operator.id}/token`)).status).toBe(404);
  });

  it("have plain names, unique among active operators, never the admin token's", async () => {
    const operator = await newOperator("carol");
    for (const name of [operator.name, "admin", "ADMIN", "two words", "", "x".repeat(101)]) {
      const refused = await admin(stack, "POST", "/admin/api/operators", { name });
      expect({ name, status: refused.status, field: refused.body.error.details[0]?.field }).toEqual({ name, status: 400, field: "name" });
    }
    await admin(stack, "POST", `/admin/api/operators/${operator.id}/revoke`);
    expect((await admin(stack, "POST", "/admin/api/operators", { name: operator.name })).status).toBe(201);
  });
});

describe("ADMIN_TOKEN outside local mode", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const config = loadGatewayConfig({ LOCAL_MODE: "true", OPERATIONS_URL: `http://127.0.0.1:${stack.services.operations.grpcPort}`, ROUTING_URL: `http://127.0.0.1:${stack.services.routing.grpcPort}` });
    const app = createAdminApp({
      log: createLogger("gateway", "silent"),
      clients: createGatewayClients(config, null),
      keyCache: new KeyCache(0),
      paymentPageHost: config.PAYMENT_PAGE_HOST,
      adminToken: ADMIN_TOKEN,
      localMode: false,
      attempts: new ClientAttempts({ trustedProxies: [], perSecond: 1, burst: 10, message: "slow down" }),
      refusals: new AuthRefusals(unitMetricsRegistry()),
    });
    server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server?.close(r)));

  it("only manages operators; everything else needs an operator token", async () => {
    const created = await call(ADMIN_TOKEN, "POST", "/admin/api/operators", { name: "dave" }, base);
    expect(created.status).toBe(201);
    expect((await call(ADMIN_TOKEN, "GET", "/admin/api/operators", undefined, base)).status).toBe(200);
    for (const [method, path] of [["GET", "/admin/api/routes"], ["POST", "/admin/api/merchants"], ["GET", "/admin/api/operators-elsewhere"]]) {
      const refused = await call(ADMIN_TOKEN, method, path, method === "POST" ? { name: "M" } : undefined, base);
      expect({ path, status: refused.status, message: refused.body.error.message }).toEqual({
        path,
        status: 401,
        message: "outside local mode the admin token only manages operators: sign in with an operator token",
      });
    }
    expect((await call(created.body.token, "GET", "/admin/api/routes", undefined, base)).status).toBe(200);
    expect((await call(ADMIN_TOKEN, "POST", `/admin/api/operators/${created.body.id}/revoke`, undefined, base)).status).toBe(200);
  });

  it("signs an operator in to the console with a Secure cookie, and the admin token not at all", async () => {
    const signIn = (token: string) =>
      fetch(`${base}/admin/sign-in`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token }) });
    const { token } = (await call(ADMIN_TOKEN, "POST", "/admin/api/operators", { name: "erin" }, base)).body;
    const operator = await signIn(token);
    expect(operator.status).toBe(303);
    expect(operator.headers.get("set-cookie")).toMatch(/^pgw_console=pgwop_[^;]+; path=\/admin; samesite=strict; secure; httponly$/);
    const bootstrap = await signIn(ADMIN_TOKEN);
    expect(bootstrap.status).toBe(401);
    expect(await bootstrap.text()).toContain("Outside local mode the admin token only manages operators: sign in with an operator token.");
  });
});
