/**
 * Where a benchmark row's CPU went: every process of the local stack (each unit, its launcher,
 * Postgres, NATS) and the benchmark itself, read from /proc before and after the row. On two cores
 * shared by all of them, CPU per request is what decides throughput and, near saturation, latency.
 * Linux only; on another system the figures are simply absent.
 */
import fs from "node:fs";
import { processCommandLine, processCpuMs } from "../../deploy/local/src/process-utils";
import { UNITS } from "../../deploy/local/src/units";

/**
 * CPU time so far (ms) per process group: the units by name, "launcher" (the local stack's `start`,
 * which copies every unit's output lines), "postgres", "nats", "bench".
 */
export type CpuSnapshot = Map<string, number>;

const LAUNCHER_ENTRY = "deploy/local/src/start.ts";

function groupOf(cmdline: string): string | undefined {
  const unit = UNITS.find((u) => cmdline.includes(u.entry));
  if (unit) return unit.name;
  if (cmdline.includes(LAUNCHER_ENTRY)) return "launcher";
  if (/(^|\/)postgres[: ]/.test(cmdline)) return "postgres";
  if (cmdline.includes("nats-server")) return "nats";
  return undefined;
}

/** The stack's processes' CPU time (user + system) so far, and this process's own as "bench". */
export function cpuSnapshot(): CpuSnapshot {
  const snapshot: CpuSnapshot = new Map();
  let pids: string[];
  try {
    pids = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return snapshot;
  }
  for (const pid of pids.map(Number)) {
    const group = groupOf(processCommandLine(pid) ?? "");
    if (!group) continue;
    const ms = processCpuMs(pid);
    if (ms !== undefined) snapshot.set(group, (snapshot.get(group) ?? 0) + ms); // undefined: it ended meanwhile
  }
  const own = process.cpuUsage();
  snapshot.set("bench", (own.user + own.system) / 1000);
  return snapshot;
}

/** Each group's CPU ms per request between two snapshots, largest first (those under 0.005 left out). */
function sharesPerRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number): (readonly [string, number])[] {
  return [...after]
    .map(([group, ms]) => [group, (ms - (before.get(group) ?? 0)) / requests] as const)
    .filter(([, ms]) => ms >= 0.005)
    .sort((a, b) => b[1] - a[1]);
}

/**
 * CPU ms per request between two snapshots, largest first, as "2.31 (gateway 1.10, operations
 * 0.92, …)". A process that started in between counts whole; one that ended in between is missed.
 */
export function cpuPerRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number): string {
  if (after.size <= 1 || requests === 0) return "–";
  const shares = sharesPerRequest(before, after, requests);
  const total = shares.reduce((sum, [, ms]) => sum + ms, 0);
  return `${total.toFixed(2)} (${shares.map(([group, ms]) => `${group} ${ms.toFixed(2)}`).join(", ")})`;
}

/**
 * The stack's CPU ms per request: every group but "bench", which is the load generator and the
 * merchant's webhook receiver, not part of what is measured. Undefined when nothing was measured.
 */
export function stackCpuPerRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number): number | undefined {
  if (after.size <= 1 || requests === 0) return undefined;
  return sharesPerRequest(before, after, requests)
    .filter(([group]) => group !== "bench")
    .reduce((sum, [, ms]) => sum + ms, 0);
}
