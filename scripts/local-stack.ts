import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { localUrls, resolveUnitPorts } from "../deploy/local/src/units";

/**
 * The local stack `pnpm bench` and `pnpm chaos` drive. Its URLs follow the launcher's port
 * variables (GATEWAY_HTTP_PORT, …), so a stack started here with other ports is found too.
 */
const urls = localUrls(resolveUnitPorts(process.env));
export const GATEWAY = process.env.BENCH_GATEWAY_URL ?? urls.PUBLIC_BASE_URL;
export const ADMIN = process.env.BENCH_ADMIN_URL ?? urls.ADMIN_BASE_URL;
export const SANDBOX = process.env.BENCH_SANDBOX_URL ?? urls.SANDBOX_URL;
export const ADMIN_TOKEN = process.env.ADMIN_TOKEN ?? "dev-admin-token";

const ROOT = path.resolve(__dirname, "..");
/** The launcher's data directory (its lock file, the embedded servers' data and pid files). */
export const DATA_DIR = path.resolve(process.env.START_DATA_DIR || path.join(ROOT, ".data"));

async function ready(): Promise<boolean> {
  try {
    return (await fetch(`${GATEWAY}/readyz`)).status === 204;
  } catch {
    return false;
  }
}

/**
 * The local stack to drive: the one `pnpm start` already runs, or one this script starts (and
 * stops) with the same launcher, so the figures are for the real multi-process system.
 */
export async function localStack(log: (line: string) => void): Promise<{ stop(): Promise<void> }> {
  if (await ready()) {
    log(`using the running local stack at ${GATEWAY}`);
    return { stop: async () => undefined };
  }
  log("starting the local stack (pnpm start)…");
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "deploy/local/src/start.ts")], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const deadline = Date.now() + 120_000;
  while (!(await ready())) {
    if (child.exitCode !== null) throw new Error(`the local stack exited (${child.exitCode})`);
    if (Date.now() > deadline) throw new Error("the local stack did not become ready in 120 s");
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGINT");
      }),
  };
}

export async function adminPost(pathName: string, body: unknown): Promise<any> {
  const res = await fetch(ADMIN + pathName, { method: "POST", headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`admin ${pathName}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A fresh shop for the benchmark: no rate limit in the way, an overdraft for payouts. */
export async function benchShop(webhookUrl?: string): Promise<{ shopId: string; apiKey: string; webhookSecret: string }> {
  const merchant = await adminPost("/admin/api/merchants", { name: "Benchmark merchant" });
  const shop = await adminPost("/admin/api/shops", { merchant_id: merchant.id, name: "Benchmark shop", rate_limit_rps: 100000, overdraft_limit: "1000000000", webhook_url: webhookUrl });
  const key = await adminPost(`/admin/api/shops/${shop.id}/api-keys`, { label: "bench" });
  return { shopId: shop.id, apiKey: key.api_key, webhookSecret: shop.webhook_secret };
}
