/**
 * `pnpm bench`: drives the local stack (the running `pnpm start`, or one started here) with a
 * zero-delay sandbox and prints throughput, latency, CPU and work per request, then whether each of
 * the targets in bench/targets.ts was met.
 * Saturated rows are closed loop (autocannon, 32 connections: the most the stack answers). Rows at a
 * target rate are open loop (bench/open-loop.ts: evenly spaced arrivals, latency from each request's
 * due time), because autocannon's `overallRate` sends in bursts and misweights its percentiles.
 */
import type autocannon from "autocannon";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { koaBaseline, REFERENCE_KOA_RPS } from "./bench/baseline";
import { load, percentile, type LoadResult } from "./bench/load";
import { cpuPerRequest, cpuSnapshot, stackCpuPerRequest } from "./bench/cpu";
import { openLoop, type OpenLoopOptions } from "./bench/open-loop";
import { TARGETS, verdictTable, type Measured, type Target } from "./bench/targets";
import { WORK_KINDS, workPerRequest, workSnapshot } from "./bench/work";
import { benchShop, GATEWAY, localStack, SANDBOX } from "./local-stack";

const log = (line: string) => process.stdout.write(`[bench] ${line}\n`);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WEBHOOK_OPERATIONS = Number(process.env.BENCH_WEBHOOKS ?? 2000);
const PAYOUT_RATE = 20;
// Seven processes and Postgres' per-connection caches take about 20 s of create load to reach a
// steady state here: after only 200 creates a 10 s row ran at 37–62 req/s, after 30 s at 96–106.
const WARM_UP_S = Number(process.env.BENCH_WARMUP_S ?? 30);
const WARM_UP_COMPLETIONS = Number(process.env.BENCH_WARMUP_COMPLETIONS ?? 300);
/** Groups of rows to run (comma-separated; default all): create, reads, balances, webhooks. */
const ROW_GROUPS = ["create", "reads", "balances", "webhooks"] as const;
const rowsWanted = (process.env.BENCH_ROWS ?? ROW_GROUPS.join(",")).split(",").map((s) => s.trim());
for (const r of rowsWanted) if (!(ROW_GROUPS as readonly string[]).includes(r)) throw new Error(`BENCH_ROWS: unknown group ${JSON.stringify(r)} (known: ${ROW_GROUPS.join(", ")})`);
const runs = (group: (typeof ROW_GROUPS)[number]) => rowsWanted.includes(group);

const paymentBody = (extra: Record<string, string> = {}) =>
  JSON.stringify({ merchant_operation_id: randomUUID(), client_id: "bench", method: "WT_RUB_C2C", amount: "1500.00", currency: "RUB", ...extra });

async function post(apiKey: string, path: string, body: string): Promise<any> {
  const res = await fetch(GATEWAY + path, { method: "POST", headers: { "content-type": "application/json", "x-api-key": apiKey }, body });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** What the stack spent meanwhile: CPU per process and work per kind, each per request. */
async function measured() {
  const [cpuBefore, workBefore] = [cpuSnapshot(), await workSnapshot()];
  return async (requests: number) => {
    const cpuAfter = cpuSnapshot();
    return { cpu: cpuPerRequest(cpuBefore, cpuAfter, requests), stackCpu: stackCpuPerRequest(cpuBefore, cpuAfter, requests), work: workPerRequest(workBefore, await workSnapshot(), requests) };
  };
}

/** Runs one row's load and adds the CPU and the work of the stack per request meanwhile. */
async function withCpu(run: () => Promise<LoadResult>): Promise<LoadResult> {
  const spent = await measured();
  const result = await run();
  return { ...result, ...(await spent(result.requests)) };
}

/**
 * Two unmeasured seconds of a row's own load first, so a path no earlier row ran (a completed
 * operation's evidence, balances) is measured compiled rather than while the JIT warms up to it.
 */
async function warmUp(options: Omit<OpenLoopOptions, "durationS">): Promise<void> {
  await openLoop("warm-up", { ...options, durationS: 2 });
}

/** Runs `task` over `count` items with `concurrency` workers. */
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await task(next++);
  }));
}

/** A merchant endpoint recording when each operation's completion webhook arrived. */
async function webhookReceiver() {
  const arrivals = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        if (body.type === "operation.completed" && !arrivals.has(body.data.operation_id)) arrivals.set(body.data.operation_id, at);
      } catch {
        /* not ours */
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrivals, close: () => new Promise((r) => server.close(r)) };
}

async function webhookRun(apiKey: string, arrivals: Map<string, number>, count: number, rate: number) {
  const ids: string[] = [];
  await pool(count, 16, async () => void ids.push((await post(apiKey, "/v1/payment", paymentBody())).operation_id));
  await new Promise((r) => setTimeout(r, 2000)); // the creates' own events settle before the CPU count starts
  const spent = await measured();
  const sentAt = new Map<string, number>();
  const interval = 1000 / rate;
  const started = performance.now();
  const inFlight = new Set<Promise<unknown>>();
  for (let i = 0; i < ids.length; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    // The sandbox answers a control call after its callback went out: cap what is outstanding.
    while (inFlight.size >= 64) await Promise.race(inFlight);
    sentAt.set(ids[i], performance.now());
    const call = fetch(`${SANDBOX}/control/operations/${ids[i]}/pay`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount: "1500.00" }) }).catch(() => undefined);
    inFlight.add(call);
    void call.finally(() => inFlight.delete(call));
  }
  const offeredPerSecond = Math.round(ids.length / ((performance.now() - started) / 1000));
  await Promise.all(inFlight);
  const deadline = performance.now() + 60_000;
  while (ids.some((id) => !arrivals.has(id)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const { cpu, stackCpu, work } = await spent(ids.length);
  const delivered = ids.filter((id) => arrivals.has(id));
  const latencies = delivered.map((id) => arrivals.get(id)! - sentAt.get(id)!);
  const times = delivered.map((id) => arrivals.get(id)!);
  const spanS = (Math.max(...times) - Math.min(...times)) / 1000;
  return { offeredPerSecond, delivered: delivered.length, total: ids.length, perSecond: Math.round(delivered.length / Math.max(spanS, 0.001)), p50: Math.round(percentile(latencies, 50)), p99: Math.round(percentile(latencies, 99)), cpu, stackCpu, work };
}

async function main() {
  log("measuring the host (bare Koa, as on the reference host)…");
  const baseline = await koaBaseline();
  const host = `host: a bare Koa JSON POST server answers ${baseline} req/s here now; the reference host the targets were set on had ${REFERENCE_KOA_RPS} (×${(baseline / REFERENCE_KOA_RPS).toFixed(2)}); Node ${process.version}`;
  log(host);
  const stack = await localStack(log);
  const receiver = await webhookReceiver();
  try {
    await fetch(`${SANDBOX}/control/scenario`, { method: "DELETE" });
    const { apiKey } = await benchShop(receiver.url);
    const headers = { "content-type": "application/json", "x-api-key": apiKey };
    const createLoad: Pick<autocannon.Options, "url" | "requests"> = {
      url: `${GATEWAY}/v1/payment`,
      requests: [{ method: "POST", headers, setupRequest: (req) => ({ ...req, body: paymentBody() }) }],
    };
    log(`warming up: creates for ${WARM_UP_S} s, unmeasured…`);
    await load("warm-up", { ...createLoad, duration: WARM_UP_S });

    const results: LoadResult[] = [];
    const checked: { target: Target; measured: Measured }[] = [];
    const report = (r: LoadResult, target?: Target) => {
      results.push(r);
      if (target) checked.push({ target, measured: { perSecond: r.rps, p99: r.p99, cpuMs: r.stackCpu, failed: r.non2xx + r.errors } });
      log(`${r.name}: ${r.rps} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}, CPU ms/request ${r.cpu ?? "–"}`);
    };
    if (runs("create")) {
      log(`create payment for ${DURATION_S} s…`);
      report(await withCpu(() => load("POST /v1/payment", { ...createLoad, duration: DURATION_S })));
      const rate = TARGETS.create.rate;
      log(`create payment at the target rate (${rate}/s, open loop) for ${DURATION_S} s…`);
      report(await withCpu(() => openLoop(`POST /v1/payment @ ${rate}/s arrivals`, { url: `${GATEWAY}/v1/payment`, method: "POST", headers, body: paymentBody, rate, durationS: DURATION_S })), TARGETS.create);
    }
    if (runs("reads")) {
      const probe = await post(apiKey, "/v1/payment", paymentBody());
      const stateBody = JSON.stringify({ operation_id: probe.operation_id });
      const stateLoad = { url: `${GATEWAY}/v1/get_operation_state`, duration: DURATION_S, method: "POST" as const, headers, body: stateBody };
      const stateAt = (rate: number) => ({ url: stateLoad.url, method: "POST" as const, headers, body: stateBody, rate, durationS: DURATION_S });
      log(`get_operation_state for ${DURATION_S} s, then at the target rate (${TARGETS.pending.rate}/s, open loop)…`);
      report(await withCpu(() => load("POST /v1/get_operation_state", stateLoad)));
      report(await withCpu(() => openLoop(`POST /v1/get_operation_state @ ${TARGETS.pending.rate}/s arrivals`, stateAt(TARGETS.pending.rate))), TARGETS.pending);
      // A completed operation also reads its receipt evidence (receipts service, signed links).
      await fetch(`${SANDBOX}/control/operations/${probe.operation_id}/pay`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount: "1500.00" }) });
      while ((await post(apiKey, "/v1/get_operation_state", JSON.stringify({ operation_id: probe.operation_id }))).status !== "completed") await new Promise((r) => setTimeout(r, 100));
      await warmUp(stateAt(TARGETS.completed.rate));
      report(await withCpu(() => openLoop(`POST /v1/get_operation_state, completed @ ${TARGETS.completed.rate}/s arrivals`, stateAt(TARGETS.completed.rate))), TARGETS.completed);
    }
    if (runs("balances")) {
      // Balances while payouts reserve on the same shop: once at a steady payout rate (the target's
      // setting), once with payouts as fast as they go (then they take most of the two cores).
      const payoutBody = () => paymentBody({ number: "4111111111111111", amount: "10.00" });
      const rate = TARGETS.balances.rate;
      const balancesWithPayouts = async (label: string, payoutRate?: number) => {
        log(`balances with concurrent payouts (${label}) for ${DURATION_S} s…`);
        await warmUp({ url: `${GATEWAY}/v1/balances`, headers, rate });
        const spent = await measured();
        const [balances, payouts] = await Promise.all([
          openLoop(`GET /v1/balances @ ${rate}/s arrivals, payouts ${label}`, { url: `${GATEWAY}/v1/balances`, headers, rate, durationS: DURATION_S }),
          payoutRate
            ? openLoop(`POST /v1/payout, ${label}`, { url: `${GATEWAY}/v1/payout`, method: "POST", headers, body: payoutBody, rate: payoutRate, durationS: DURATION_S })
            : load(`POST /v1/payout, ${label}`, {
                url: `${GATEWAY}/v1/payout`,
                duration: DURATION_S,
                connections: 4,
                requests: [{ method: "POST", headers, setupRequest: (req) => ({ ...req, body: payoutBody() }) }],
              }),
        ]);
        // The CPU and work of both loads, per balances request.
        Object.assign(balances, await spent(balances.requests));
        report(balances, payoutRate === PAYOUT_RATE ? TARGETS.balances : undefined);
        report(payouts);
      };
      await balancesWithPayouts(`@ ${PAYOUT_RATE}/s arrivals`, PAYOUT_RATE);
      await balancesWithPayouts("saturating");
    }
    const webhookRows: Awaited<ReturnType<typeof webhookRun>>[] = [];
    if (runs("webhooks")) {
      log(`warming up: ${WARM_UP_COMPLETIONS} completions at 30/s, unmeasured…`);
      await webhookRun(apiKey, receiver.arrivals, WARM_UP_COMPLETIONS, 30);
      for (const [target, count] of [[TARGETS.completion, WEBHOOK_OPERATIONS], [TARGETS.completionSlow, 300]] as const) {
        log(`webhooks: ${count} completions at ${target.rate}/s…`);
        const row = await webhookRun(apiKey, receiver.arrivals, count, target.rate);
        webhookRows.push(row);
        checked.push({ target, measured: { perSecond: row.perSecond, p99: row.p99, cpuMs: row.stackCpu, failed: row.total - row.delivered } });
      }
    }

    console.log(`\n${host}`);
    if (results.length) console.log("\n| load | req/s | p50 ms | p99 ms | non-2xx | errors | CPU ms per request |\n|---|---|---|---|---|---|---|");
    for (const r of results) console.log(`| ${r.name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${r.cpu ?? "–"} |`);
    if (webhookRows.length) console.log(`\n| webhooks | delivered | deliveries/s | completion → webhook p50 ms | p99 ms | CPU ms per completion |\n|---|---|---|---|---|---|`);
    for (const h of webhookRows) console.log(`| ${h.offeredPerSecond}/s offered | ${h.delivered}/${h.total} | ${h.perSecond} | ${h.p50} | ${h.p99} | ${h.cpu ?? "–"} |`);
    // Where each row's work went, per request (per completion for the webhook rows).
    const worked = [...results.map((r) => [r.name, r.work] as const), ...webhookRows.map((h) => [`completion → webhook, ${h.offeredPerSecond}/s offered`, h.work] as const)];
    console.log(`\n| work per request | ${WORK_KINDS.join(" | ")} |\n|---|${WORK_KINDS.map(() => "---|").join("")}`);
    for (const [name, work] of worked) console.log(`| ${name} | ${WORK_KINDS.map((k) => work?.get(k) ?? "–").join(" | ")} |`);
    if (checked.length) console.log(`\n${verdictTable(checked)}`);
  } finally {
    await receiver.close();
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
