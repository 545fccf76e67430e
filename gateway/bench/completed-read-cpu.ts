/**
 * The gateway's CPU per get_operation_state of a completed operation, the read its caches of final
 * reads answer without any RPC (docs/decisions/0008-gateway-caches-of-final-reads.md). The stack
 * runs in this process against the machine's Postgres and NATS (as the system tests start it); one
 * completed payment is made through it. The measured gateway is a child process on the stack's
 * services, logging at warn as `pnpm bench` runs it (or `--log-level`) to a pipe this process
 * drains; its CPU is read from /proc/<pid>/stat around each round, so the load generator's own CPU
 * is not counted. Each round sends `--rate` requests a second (open loop) for `--seconds` over
 * keep-alive connections and reports CPU µs per request and the latency's p50 and p99.
 *
 *   node --import tsx gateway/bench/completed-read-cpu.ts [--rounds=3] [--rate=1000] [--seconds=10] [--log-level=warn] [--node-args="…"] [checkout…]
 *
 * Each checkout is a repository root whose gateway is measured (default: this one); with several,
 * rounds alternate between them, so a busy neighbour weighs on each alike. `--node-args` are given
 * to the measured gateways' node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile them.
 * Figures: docs/benchmarks.md, The gateway's completed read.
 */
import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import { freePortForLater } from "../../deploy/local/src/free-port";
import { processCpuTimesMs } from "../../deploy/local/src/process-utils";
import { percentile } from "../../scripts/bench/load";
import { natsUrl } from "../../test/support/infra";
import { merchantClient, newMoid, sandboxControl } from "../../test/support/merchant";
import { pollUntil } from "../../test/support/poll";
import { ADMIN_TOKEN, createShopWithKey, startStack } from "../../test/support/stack";

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: "string", default: "3" },
    rate: { type: "string", default: "1000" },
    seconds: { type: "string", default: "10" },
    // `pnpm bench` runs its stack at warn; a running `start` logs every request at info.
    "log-level": { type: "string", default: "warn" },
    "node-args": { type: "string", default: "" },
  },
});
const [ROUNDS, RATE, SECONDS] = [Number(options.rounds), Number(options.rate), Number(options.seconds)];
const CHECKOUTS = positionals.length > 0 ? positionals.map((p) => path.resolve(p)) : [path.resolve(__dirname, "../..")];
const CHILD_NODE_ARGS = options["node-args"].split(" ").filter(Boolean);

/** User and system CPU of a process so far, in µs. */
function cpuUs(pid: number): { user: number; system: number } {
  const times = processCpuTimesMs(pid);
  if (!times) throw new Error(`no CPU times of process ${pid}`);
  return { user: times.userMs * 1000, system: times.systemMs * 1000 };
}

/** Starts the gateway of `checkout` in a child process; resolves with it and its public port once it is ready. */
async function startChildGateway(checkout: string, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePortForLater();
  const child = spawn(process.execPath, [...CHILD_NODE_ARGS, "--import", "tsx", path.join(checkout, "gateway/src/main.ts")], {
    cwd: checkout,
    env: { PATH: process.env.PATH, ...env, HTTP_PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  child.stdout!.resume(); // its log lines, read as a launcher would
  let exited: number | null | undefined;
  child.once("exit", (code) => (exited = code));
  const ready = await pollUntil(() => fetch(`http://127.0.0.1:${port}/readyz`).then((res) => res.status === 204, () => exited !== undefined), Boolean, 60_000, 200);
  if (!ready || exited !== undefined) throw new Error(`the gateway of ${checkout} did not start (exit code ${exited})`);
  return { child, port };
}

/** Sends `count` reads at `rate` a second (open loop); answers each one's latency in ms. */
async function readAtRate(port: number, agent: http.Agent, apiKey: string, body: string, count: number, rate: number): Promise<number[]> {
  const latencies: number[] = [];
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const started = performance.now();
      const req = http.request({ port, host: "127.0.0.1", method: "POST", path: "/v1/get_operation_state", agent, headers: { "content-type": "application/json", "x-api-key": apiKey, "content-length": Buffer.byteLength(body) } }, (res) => {
        res.resume().on("end", () => {
          if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
          latencies.push(performance.now() - started);
          resolve();
        });
      });
      req.on("error", reject).end(body);
    });
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  for (let sent = 0; sent < count; ) {
    const due = Math.min(count, Math.floor(((performance.now() - started) * rate) / 1000) + 1);
    while (sent < due) (inFlight.push(one()), sent++);
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inFlight);
  return latencies;
}

const median = (values: number[]) => percentile(values, 50);

async function main() {
  const stack = await startStack();
  const shop = await createShopWithKey(stack, { rate_limit_rps: 100_000 });
  const merchant = merchantClient(stack, shop.apiKey);
  const created = await merchant.payment({ merchant_operation_id: newMoid(), client_id: "bench", method: "WT_RUB_C2C", amount: "1500.00", currency: "RUB" });
  const operationId = created.body.operation_id as string;
  await sandboxControl(stack).pay(operationId, { amount: "1500.00" });
  const done = await merchant.waitForStatus(operationId, "completed");
  if (!done.body?.receipts?.[0]?.receipt_url) throw new Error(`no completed operation with a receipt link: ${JSON.stringify(done.body)}`);
  // A key cache emptied by a NATS reconnect (a loaded machine) must not turn reads into 429s.
  const env = { UNAUTHENTICATED_RATE_LIMIT_RPS: "100000", ADMIN_PORT: "0", HEALTH_PORT: "0", LOG_LEVEL: options["log-level"], LOCAL_MODE: "true", ADMIN_TOKEN, NATS_URL: natsUrl(), NATS_NAMESPACE: stack.namespace, ...stack.peerUrls };
  const body = JSON.stringify({ operation_id: operationId });
  const gateways = [];
  for (const checkout of CHECKOUTS) {
    const { child, port } = await startChildGateway(checkout, env);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    await readAtRate(port, agent, shop.apiKey, body, 3000, RATE); // warm-up: caches, JIT
    gateways.push({ checkout, child, port, agent, rows: [] as { us: number; p99: number }[] });
  }
  console.log(`${RATE} completed reads/s for ${SECONDS} s a round, LOG_LEVEL=${options["log-level"]}; gateway CPU µs per read, latency ms p50 / p99`);
  for (let round = 0; round < ROUNDS; round++) {
    for (const g of gateways) {
      const before = cpuUs(g.child.pid!);
      const latencies = await readAtRate(g.port, g.agent, shop.apiKey, body, RATE * SECONDS, RATE);
      const after = cpuUs(g.child.pid!);
      const [user, system] = [(after.user - before.user) / latencies.length, (after.system - before.system) / latencies.length];
      const us = user + system;
      g.rows.push({ us, p99: percentile(latencies, 99) });
      console.log(`round ${round + 1} ${g.checkout}: ${us.toFixed(0)} µs (user ${user.toFixed(0)}, system ${system.toFixed(0)})  ${percentile(latencies, 50).toFixed(2)} / ${percentile(latencies, 99).toFixed(2)} ms`);
    }
  }
  console.log("median of the rounds: CPU µs per read, p99 ms");
  for (const g of gateways) console.log(`${g.checkout}: ${median(g.rows.map((r) => r.us)).toFixed(0)} µs, ${median(g.rows.map((r) => r.p99)).toFixed(2)} ms`);
  for (const g of gateways) {
    g.agent.destroy();
    g.child.kill("SIGTERM");
    await new Promise((r) => g.child.once("exit", r));
  }
  await stack.stop();
  process.exit(0);
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
