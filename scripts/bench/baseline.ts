/**
 * The host's speed, measured as it was on the reference host where the targets were set: a bare
 * Koa JSON POST server in a process of its own under autocannon with 32 connections. A shared
 * machine's speed drifts severalfold between days, so every bench run prints it beside its figures
 * (docs/benchmarks.md).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { load } from "./load";

/** The bare Koa server's throughput on the reference host the targets were set on. */
export const REFERENCE_KOA_RPS = 18_000;

const ROOT = path.resolve(__dirname, "..", "..");

const SERVER = `
const Koa = require(process.argv[1]);
const app = new Koa();
app.use(async (ctx) => { let body = ""; for await (const c of ctx.req) body += c; ctx.body = { ok: true, length: body.length }; });
const server = app.listen(0, "127.0.0.1", () => console.log(server.address().port));`;

/** Requests a second a bare Koa JSON POST server answers here now (autocannon, 32 connections, `durationS`). */
export async function koaBaseline(durationS = 5): Promise<number> {
  const koa = require.resolve("koa", { paths: [path.join(ROOT, "gateway")] });
  const child = spawn(process.execPath, ["-e", SERVER, koa], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.once("data", (d: Buffer) => resolve(Number(String(d).trim())));
      child.once("exit", (code) => reject(new Error(`the baseline server exited (${code})`)));
    });
    const result = await load("bare Koa JSON POST", {
      url: `http://127.0.0.1:${port}/`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ merchant_operation_id: "baseline", amount: "1500.00" }),
      duration: durationS,
    });
    if (result.non2xx + result.errors > 0) throw new Error(`the baseline server failed ${result.non2xx + result.errors} requests`);
    return result.rps;
  } finally {
    child.kill();
  }
}
