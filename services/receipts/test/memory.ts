/**
 * Resident memory of a process and of the processes it started (Linux /proc), sampled while a
 * test runs: what a parse really costs the machine, wherever it runs.
 */
import { readdirSync, readFileSync } from "node:fs";
import { residentMb } from "../src/connectors/pdf-reader";

/** The processes `pid` started, and theirs. */
function descendants(pid: number): number[] {
  let children: number[];
  try {
    children = readdirSync(`/proc/${pid}/task`).flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean).map(Number));
  } catch {
    return []; // gone meanwhile
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

/**
 * Peaks, MiB: of the process itself, of any one of the processes it started meanwhile, and of those
 * and itself at once.
 */
export interface MemoryPeaks {
  selfMb: number;
  descendantMb: number;
  treeMb: number;
}

/**
 * Samples `pid` and the processes it starts from now on (not those already running, such as the
 * test run's own Postgres) every few ms until `stop()`, which answers the peaks.
 */
export function sampleMemory(pid: number = process.pid): { stop(): MemoryPeaks } {
  const peaks: MemoryPeaks = { selfMb: 0, descendantMb: 0, treeMb: 0 };
  const before = new Set(descendants(pid));
  const timer = setInterval(() => {
    const self = residentMb(pid);
    const others = descendants(pid)
      .filter((child) => !before.has(child))
      .map(residentMb);
    peaks.selfMb = Math.max(peaks.selfMb, self);
    peaks.descendantMb = Math.max(peaks.descendantMb, ...others);
    peaks.treeMb = Math.max(peaks.treeMb, others.reduce((sum, mb) => sum + mb, self));
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      return peaks;
    },
  };
}
