/**
 * The demo merchant, shop, API key and webhook signing secret of `start`: created through the admin
 * API on first start and kept in a file (demo.json) so later starts show the same ones in the
 * banner. Every start points the shop's webhook URL at that start's demo receiver.
 */
import fs from "node:fs";
import type { EmbeddedInfra } from "./embedded-infra";

export interface DemoData {
  merchant_id: string;
  shop_id: string;
  api_key_id: string;
  api_key: string;
  /** The shop's webhook signing secret (absent in files written before it was kept). */
  webhook_secret?: string;
  created_at: string;
}

/**
 * demo.json holds one entry per Postgres server: "embedded" for the embedded one, host:port for a
 * server given by DATABASE_URL, so switching between them does not create the demo data again.
 */
type DemoFile = Record<string, DemoData>;

export function demoServerKey(infra: EmbeddedInfra): string {
  if (infra.embedded.postgres) return "embedded";
  try {
    const url = new URL(infra.databaseUrl);
    return `${url.hostname}:${url.port || "5432"}`;
  } catch {
    return "external";
  }
}

function isDemoData(value: unknown): value is DemoData {
  const demo = value as Partial<DemoData> | null;
  return typeof demo === "object" && demo !== null && typeof demo.shop_id === "string" && typeof demo.api_key === "string";
}

function readDemoFile(file: string): DemoFile {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as unknown;
    if (isDemoData(parsed)) return { embedded: parsed }; // a single entry
    if (typeof parsed === "object" && parsed !== null) {
      return Object.fromEntries(Object.entries(parsed).filter(([, demo]) => isDemoData(demo))) as DemoFile;
    }
  } catch {
    // none yet
  }
  return {};
}

async function adminCall(adminBase: string, token: string, method: "GET" | "POST" | "PATCH", pathName: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${adminBase}${pathName}`, {
    method,
    headers: { authorization: `Bearer ${token}`, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  try {
    return { status: response.status, json: JSON.parse(text) as Record<string, unknown> };
  } catch {
    throw new Error(`${method} ${pathName} answered ${response.status} with no JSON body`);
  }
}

async function adminPost(adminBase: string, token: string, pathName: string, body: unknown, method: "POST" | "PATCH" = "POST"): Promise<Record<string, unknown>> {
  const { status, json } = await adminCall(adminBase, token, method, pathName, body);
  if (status < 200 || status > 299) throw new Error(`${method} ${pathName} answered ${status}: ${JSON.stringify(json).slice(0, 500)}`);
  return json;
}

function requireString(value: Record<string, unknown>, field: string, what: string): string {
  const v = value[field];
  if (typeof v !== "string" || v === "") throw new Error(`${what}: the answer has no "${field}": ${JSON.stringify(value).slice(0, 300)}`);
  return v;
}

/** False only when the gateway says the key is unknown or revoked. */
async function demoKeyAccepted(apiBase: string, apiKey: string): Promise<boolean> {
  try {
    const response = await fetch(`${apiBase}/v1/balances`, { headers: { "x-api-key": apiKey }, signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer().catch(() => undefined);
    return response.status !== 401;
  } catch {
    return true;
  }
}

async function issueKey(adminBase: string, token: string, shopId: string): Promise<Pick<DemoData, "api_key_id" | "api_key">> {
  const key = await adminPost(adminBase, token, `/admin/api/shops/${encodeURIComponent(shopId)}/api-keys`, { label: "demo" });
  return { api_key_id: requireString(key, "id", "create API key"), api_key: requireString(key, "api_key", "create API key") };
}

export interface DemoDataOptions {
  adminBase: string;
  apiBase: string;
  token: string;
  /** demo.json */
  file: string;
  /** Entry of the file (demoServerKey). */
  serverKey: string;
  /** Where the demo shop's webhooks go this time (the demo receiver). */
  webhookUrl: string;
  say(line: string): void;
}

/**
 * The stored demo data while its key is accepted; a new key for the stored shop when that key was
 * revoked (the shop, its balance and history stay the demo); everything created anew when the
 * shop is gone too (the database was reset). Throws when the admin API refuses.
 */
export async function ensureDemoData(o: DemoDataOptions): Promise<DemoData> {
  const file = readDemoFile(o.file);
  const demo = await demoShop(o, file[o.serverKey]);
  await adminPost(o.adminBase, o.token, `/admin/api/shops/${encodeURIComponent(demo.shop_id)}`, { webhook_url: o.webhookUrl }, "PATCH");
  if (!demo.webhook_secret) {
    o.say("making a webhook signing secret for the demo shop");
    demo.webhook_secret = requireString(await adminPost(o.adminBase, o.token, `/admin/api/shops/${encodeURIComponent(demo.shop_id)}/webhook-secret`, {}), "secret", "rotate webhook secret");
  }
  fs.writeFileSync(o.file, `${JSON.stringify({ ...file, [o.serverKey]: demo }, null, 2)}\n`, { mode: 0o600 });
  return demo;
}

/** The stored demo shop with a working key, or a new key, or a new shop (see {@link ensureDemoData}). */
async function demoShop(o: DemoDataOptions, stored: DemoData | undefined): Promise<DemoData> {
  if (stored && (await demoKeyAccepted(o.apiBase, stored.api_key))) return { ...stored };
  let demo: DemoData;
  if (stored && (await adminCall(o.adminBase, o.token, "GET", `/admin/api/shops/${encodeURIComponent(stored.shop_id)}`)).status === 200) {
    o.say(`the demo API key in ${o.file} is not accepted any more (revoked?); issuing a new one for the demo shop`);
    demo = { ...stored, ...(await issueKey(o.adminBase, o.token, stored.shop_id)) };
  } else {
    if (stored) o.say(`the demo shop in ${o.file} is gone (was the database reset?); creating the demo data again`);
    o.say("creating demo data (merchant, shop, API key)");
    const merchant = await adminPost(o.adminBase, o.token, "/admin/api/merchants", { name: "Demo merchant" });
    const merchantId = requireString(merchant, "id", "create merchant");
    const shop = await adminPost(o.adminBase, o.token, "/admin/api/shops", { merchant_id: merchantId, name: "Demo shop", checkout_enabled: true });
    const shopId = requireString(shop, "id", "create shop");
    const webhookSecret = typeof shop.webhook_secret === "string" ? shop.webhook_secret : undefined;
    demo = { merchant_id: merchantId, shop_id: shopId, ...(await issueKey(o.adminBase, o.token, shopId)), webhook_secret: webhookSecret, created_at: new Date().toISOString() };
  }
  return demo;
}
