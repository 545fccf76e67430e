/**
 * Rough load check of GetBalances (the target: ≥ 1,000 req/s with p99 ≤ 25 ms while payouts are
 * reserved concurrently), against the ledger unit alone, running in its own process.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres NATS_URL=nats://127.0.0.1:4222 \
 *     npx tsx services/ledger/bench/get-balances.ts [rate=1000] [seconds=20] [history=5000]
 *
 * Open loop: `rate` calls a second are issued on schedule whatever the answers do, so queueing
 * shows in the latencies. Meanwhile one payout a 10 ms is reserved on the same shop (and released
 * half of the time), and the shop starts with `history` reserves of journal behind it.
 */
import { createClient } from "@connectrpc/connect";
import { databaseUrlFor, dropDatabase } from "@pgw/kit/db";
import { connectNats, scopedDurable, setNamespace, STREAM_NAME } from "@pgw/kit/events";
import { createPeerTransport } from "@pgw/kit/rpc";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import path from "node:path";
import { processCpuMs } from "../../../deploy/local/src/process-utils";
import { STATUS_DURABLE } from "../src/events";

// Its own NATS namespace: the bench's ledger never meets another deployment's events.
const BENCH_NAMESPACE = `bench${process.pid}`;

const [rate, seconds, history] = [Number(process.argv[2] ?? 1000), Number(process.argv[3] ?? 20), Number(process.argv[4] ?? 5000)];
const server = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const dbUrl = databaseUrlFor(server, `pgw_bench_${randomBytes(4).toString("hex")}_ledger`);
const port = 50_000 + Math.floor(Math.random() * 5000);

/** The ledger process's CPU time so far, in ms (Linux /proc). */
function cpuMs(pid: number): number {
  const ms = processCpuMs(pid);
  if (ms === undefined) throw new Error(`no CPU time for pid ${pid} (needs Linux /proc)`);
  return ms;
}

async function main() {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(__dirname, "..", "src", "main.ts")], {
    env: { ...process.env, DATABASE_URL: dbUrl, NATS_NAMESPACE: BENCH_NAMESPACE, GRPC_PORT: String(port), HEALTH_PORT: "0", LOG_LEVEL: "fatal" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  process.on("exit", () => child.kill("SIGTERM"));
  const client = createClient(LedgerService, createPeerTransport(`http://127.0.0.1:${port}`, { timeoutMs: 10_000 }));
  try {
    for (let i = 0; ; i++) {
      try {
        await client.getBalances({ shopId: randomUUID() });
        break;
      } catch (err) {
        if (i > 300) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const shopId = randomUUID();
    const reserve = (operationId = randomUUID()) =>
      client.reserve({ shopId, operationId, method: "WT_RUB_C2C", amount: "1.00", currency: "RUB", settlementCurrency: "RUB", overdraftLimit: "1000000000" });
    await client.adjust({ shopId, currency: "RUB", amount: "1000000.00", reason: "bench", actor: "bench", idempotencyKey: randomUUID() });
    for (let i = 0; i < history; i += 20) await Promise.all(Array.from({ length: Math.min(20, history - i) }, () => reserve()));
    console.log(`seeded ${history} reserves; ${rate} GetBalances/s for ${seconds} s while reserving`);

    let running = true;
    let reserves = 0;
    let writeErrors = 0;
    const writer = (async () => {
      while (running) {
        const operationId = randomUUID();
        try {
          await reserve(operationId);
          if (reserves++ % 2 === 0) await client.releaseReserve({ operationId });
        } catch {
          writeErrors++;
        }
        await new Promise((res) => setTimeout(res, 10));
      }
    })();

    const cpuBefore = cpuMs(child.pid!);
    const clientCpu = process.cpuUsage();
    const latencies: number[] = [];
    let errors = 0;
    const inflight: Promise<void>[] = [];
    const started = performance.now();
    const total = rate * seconds;
    for (let sent = 0; sent < total; ) {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
      for (; sent < due; sent++) {
        const t0 = performance.now();
        inflight.push(
          client.getBalances({ shopId }).then(
            () => void latencies.push(performance.now() - t0),
            () => void errors++,
          ),
        );
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    await Promise.all(inflight);
    const elapsed = (performance.now() - started) / 1000;
    const ledgerCpuMs = cpuMs(child.pid!) - cpuBefore;
    const { user, system } = process.cpuUsage(clientCpu);
    running = false;
    await writer;
    latencies.sort((a, b) => a - b);
    const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))].toFixed(1);
    console.log(
      JSON.stringify({ requests: latencies.length, errors, rps: Math.round(latencies.length / elapsed), p50_ms: q(0.5), p99_ms: q(0.99), max_ms: q(1), reserves_during: reserves, reserve_errors: writeErrors, ledger_cpu_ms_per_call: (ledgerCpuMs / total).toFixed(3), client_cpu_ms_per_call: ((user + system) / 1000 / total).toFixed(3) }),
    );
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    await dropDatabase(dbUrl);
    const nc = await connectNats(process.env.NATS_URL ?? "nats://127.0.0.1:4222", "ledger-bench", console);
    setNamespace(nc, BENCH_NAMESPACE);
    await (await nc.jetstreamManager()).consumers.delete(STREAM_NAME, scopedDurable(nc, STATUS_DURABLE)).catch(() => undefined);
    await nc.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
