/** The demo data of `start` against a real stack's admin and public APIs. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { pollUntil } from "../../../test/support/poll";
import { ADMIN_TOKEN, admin, startStack, type Stack } from "../../../test/support/stack";
import { ensureDemoData } from "../src/demo-data";

let stack: Stack;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pgw-demo-"));
const file = path.join(dir, "demo.json");
const said: string[] = [];

beforeAll(async () => {
  stack = await startStack();
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const WEBHOOK_URL = "http://127.0.0.1:9/webhooks";
const ensure = (webhookUrl = WEBHOOK_URL) => ensureDemoData({ adminBase: stack.adminUrl, apiBase: stack.publicUrl, token: ADMIN_TOKEN, file, serverKey: "embedded", webhookUrl, say: (l) => said.push(l) });
const balancesStatus = async (key: string) => (await fetch(`${stack.publicUrl}/v1/balances`, { headers: { "x-api-key": key } })).status;

test("creates the demo data once, keeps it, and gives a revoked key's shop a new key instead of a new shop", async () => {
  const first = await ensure();
  expect(await balancesStatus(first.api_key)).toBe(200);
  expect(first.webhook_secret).toMatch(/^whsec_/);
  expect((await admin(stack, "GET", `/admin/api/shops/${first.shop_id}`)).body.webhook_url).toBe(WEBHOOK_URL);
  expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ embedded: first });
  expect(await ensure()).toEqual(first);
  // Each start has its own receiver port: the shop follows it, the secret stays.
  expect(await ensure("http://127.0.0.1:10/webhooks")).toEqual(first);
  expect((await admin(stack, "GET", `/admin/api/shops/${first.shop_id}`)).body.webhook_url).toBe("http://127.0.0.1:10/webhooks");

  expect((await admin(stack, "POST", `/admin/api/api-keys/${first.api_key_id}/revoke`)).status).toBe(200);
  // The gateway drops the key from its cache when the revocation event arrives.
  expect(await pollUntil(() => balancesStatus(first.api_key), (status) => status === 401, 10_000, 100)).toBe(401);

  const renewed = await ensure();
  expect(renewed).toEqual({ ...first, api_key_id: expect.any(String), api_key: expect.any(String) });
  expect(renewed.api_key).not.toBe(first.api_key);
  expect(await balancesStatus(renewed.api_key)).toBe(200);
  expect(said.at(-1)).toMatch(/issuing a new one for the demo shop/);
}, 60_000);

test("creates the demo data anew when the stored shop is gone (a reset database)", async () => {
  const gone = { merchant_id: randomUUID(), shop_id: randomUUID(), api_key_id: randomUUID(), api_key: "pgw_unknown_key", created_at: new Date().toISOString() };
  fs.writeFileSync(file, JSON.stringify({ embedded: gone, "db.example:5432": gone }));
  const created = await ensure();
  expect(created.shop_id).not.toBe(gone.shop_id);
  expect(created.webhook_secret).toMatch(/^whsec_/);
  expect(await balancesStatus(created.api_key)).toBe(200);
  expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ embedded: created, "db.example:5432": gone }); // other servers' entries stay
}, 60_000);
