/**
 * CPU per unary call between units, client and server together in one process, as the kit runs
 * them: startRpcServer (connect-node's adapter with the kit's interceptors) answering
 * ReceiptsService.GetEvidence, called by connect-node's transports with `CALLS_IN_FLIGHT` calls in
 * flight. Rounds alternate between the transports so a busy neighbour weighs on all of them alike.
 * Also counts V8 major collections a call (full mark-compacts: the read path's tail pauses).
 *
 *   node --import tsx services/kit/bench/unary-call-cpu.ts [calls per round] [rounds]
 *
 * Figures and what they decided: docs/decisions/0014-internal-rpc-on-connect-node.md.
 */
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ReceiptsService } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import { PerformanceObserver, constants } from "node:perf_hooks";
import { Registry } from "prom-client";
import { createLogger } from "@pgw/kit/runtime";
import { createPeerTransport } from "@pgw/kit/rpc";
import { startRpcServer } from "@pgw/kit/rpc";

const CALLS = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const CALLS_IN_FLIGHT = 32;

async function main() {
  const server = await startRpcServer(
    0,
    "127.0.0.1",
    (router) =>
      router.service(ReceiptsService, {
        getEvidence: async (req) => ({ status: "complete", items: [{ id: req.operationId, amount: "100.00", completedAt: "2024-01-01T00:00:00Z", receiptUrl: "https://example.test/r" }] }),
      }),
    createLogger("bench", "silent"),
    new Registry(),
    // No connection reaches its age during the run: what is measured is the calls alone.
    { maxConnectionAgeMs: 24 * 3_600_000 },
  );
  const baseUrl = `http://127.0.0.1:${server.port}`;
  // The alternatives, with the options createPeerTransport sets that apply to them.
  const common = { baseUrl, useBinaryFormat: true, acceptCompression: [], defaultTimeoutMs: 5000 };
  const transports: Record<string, Transport> = {
    "Connect, HTTP/1.1 (createPeerTransport)": createPeerTransport(baseUrl),
    "Connect, HTTP/2": createConnectTransport({ ...common, httpVersion: "2" }),
    "gRPC, HTTP/2": createGrpcTransport(common),
  };
  let majors = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if ((entry as unknown as { detail: { kind: number } }).detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
  }).observe({ entryTypes: ["gc"] });

  const round = async (transport: Transport, calls: number) => {
    const client = createClient(ReceiptsService, transport);
    let left = calls;
    const cpu = process.cpuUsage();
    const majorsBefore = majors;
    await Promise.all(
      Array.from({ length: CALLS_IN_FLIGHT }, async () => {
        while (left-- > 0) await client.getEvidence({ operationId: "3f0c6a56-8f0e-4e43-9a0e-6f1f3d1c2b7a" });
      }),
    );
    const used = process.cpuUsage(cpu);
    return { msPerCall: (used.user + used.system) / 1000 / calls, majorsPerKCall: ((majors - majorsBefore) * 1000) / calls };
  };

  for (const transport of Object.values(transports)) await round(transport, 2000); // warm-up
  const results: Record<string, { msPerCall: number; majorsPerKCall: number }[]> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, transport] of Object.entries(transports)) (results[name] ??= []).push(await round(transport, CALLS));
  }
  console.log(`${CALLS} calls a round, ${ROUNDS} rounds, ${CALLS_IN_FLIGHT} in flight; CPU ms per call (client + server), median [min–max]; major GCs per 1,000 calls`);
  for (const [name, rows] of Object.entries(results)) {
    const ms = rows.map((r) => r.msPerCall).sort((a, b) => a - b);
    const majorsTotal = rows.reduce((sum, r) => sum + r.majorsPerKCall, 0) / rows.length;
    console.log(`${name.padEnd(40)} ${ms[Math.floor(ms.length / 2)].toFixed(3)} [${ms[0].toFixed(3)}–${ms.at(-1)!.toFixed(3)}]  ${majorsTotal.toFixed(2)}`);
  }
  await server.close(100);
  process.exit(0);
}

void main();
