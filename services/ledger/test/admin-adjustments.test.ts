/** POST /admin/api/shops/:id/adjustments on the gateway's admin app, against the real ledger unit. */
import { AppError } from "@pgw/contracts";
import { toConnectError } from "@pgw/kit/rpc";
import { createLogger, unitMetricsRegistry } from "@pgw/kit/runtime";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { createAdminApp } from "../../../gateway/src/admin/app";
import type { GatewayClients } from "../../../gateway/src/clients";
import { AuthRefusals } from "../../../gateway/src/auth/auth-refusals";
import { ClientAttempts } from "../../../gateway/src/auth/client-attempts";
import { KeyCache } from "../../../gateway/src/auth/key-cache";
import { balancesOf, startTestLedger, type TestLedger } from "./support";

const TOKEN = "admin-test-token-0123456789";
let ledger: TestLedger;
let server: Server;
let base: string;
const knownShops = new Set<string>();

beforeAll(async () => {
  ledger = await startTestLedger();
  // operations' AccountsService stand-in: only GetShop is used by the route
  const accounts = {
    async getShop({ shopId }: { shopId: string }) {
      if (!knownShops.has(shopId)) throw toConnectError(new AppError("not_found", "shop not found"));
      return { shop: { id: shopId } };
    },
  };
  const clients = { ledger: ledger.client, accounts } as unknown as GatewayClients;
  server = createAdminApp({
    log: createLogger("gateway-test", "silent"),
    clients,
    adminToken: TOKEN,
    localMode: true,
    keyCache: new KeyCache(0),
    paymentPageHost: "http://127.0.0.1/pay",
    attempts: new ClientAttempts({ trustedProxies: [], perSecond: 1, burst: 10, message: "slow down" }),
    refusals: new AuthRefusals(unitMetricsRegistry()),
  }).listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await ledger?.stop();
});

async function post(shopId: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/admin/api/shops/${shopId}/adjustments`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

function newShop() {
  const id = randomUUID();
  knownShops.add(id);
  return id;
}

it("credits and debits the shop's balance and answers 201 with the entry", async () => {
  const shopId = newShop();
  const credit = await post(shopId, { currency: "RUB", amount: "150.5", reason: "manual top-up" });
  expect(credit).toEqual({ status: 201, body: { entry_id: expect.any(String), shop_id: shopId, currency: "RUB", amount: "150.50", reason: "manual top-up" } });
  const debit = await post(shopId, { currency: "USDT", amount: "-0.000001", reason: "fee correction" });
  expect(debit.status).toBe(201);
  expect(debit.body.amount).toBe("-0.000001");
  expect(await balancesOf(ledger, shopId)).toEqual({
    RUB: { balance: "150.50", currentMinus: "0.00", reserved: "0.00" },
    USDT: { balance: "-0.000001", currentMinus: "0.000001", reserved: "0.000000" },
  });
  const entry = await ledger.db.selectFrom("journalEntries").select(["reason", "actor"]).where("id", "=", credit.body.entry_id).executeTakeFirst();
  expect(entry).toEqual({ reason: "manual top-up", actor: "admin" });
});

it("is idempotent by the Idempotency-Key header and without it makes a new entry each time", async () => {
  const shopId = newShop();
  const body = { currency: "RUB", amount: "10.00", reason: "bonus" };
  const key = { "idempotency-key": randomUUID() };
  const a = await post(shopId, body, key);
  const b = await post(shopId, body, key);
  expect(b.body.entry_id).toBe(a.body.entry_id);
  expect((await post(shopId, { ...body, amount: "11.00" }, key)).status).toBe(412);
  const c = await post(shopId, body);
  expect(c.body.entry_id).not.toBe(a.body.entry_id);
  expect((await balancesOf(ledger, shopId)).RUB.balance).toBe("20.00");
});

it.each([
  ["a zero amount", { currency: "RUB", amount: "0.00", reason: "x" }, "amount"],
  ["too many places for RUB", { currency: "RUB", amount: "1.001", reason: "x" }, "amount"],
  ["a number instead of a string", { currency: "RUB", amount: 1, reason: "x" }, "amount"],
  ["an exponent", { currency: "RUB", amount: "1e3", reason: "x" }, "amount"],
  ["an unknown currency", { currency: "EUR", amount: "1.00", reason: "x" }, "currency"],
  ["an empty reason", { currency: "RUB", amount: "1.00", reason: "   " }, "reason"],
  ["no reason", { currency: "RUB", amount: "1.00" }, "reason"],
])("answers 400 for %s", async (_, body, field) => {
  const res = await post(newShop(), body);
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("validation_error");
  expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
});

it("answers 404 for an unknown shop and 401 without the admin token", async () => {
  const unknown = randomUUID();
  expect((await post(unknown, { currency: "RUB", amount: "1.00", reason: "x" })).status).toBe(404);
  expect((await balancesOf(ledger, unknown)).RUB.balance).toBe("0.00");
  expect((await post(newShop(), { currency: "RUB", amount: "1.00", reason: "x" }, { authorization: "Bearer wrong" })).status).toBe(401);
});
