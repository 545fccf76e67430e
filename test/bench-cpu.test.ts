/**
 * The benchmark's CPU accounting: a unit's (or the launcher's) process is found by its entry on
 * the command line, and its CPU between two snapshots is shared out per request.
 */
import { spawn } from "node:child_process";
import { cpuPerRequest, cpuSnapshot, stackCpuPerRequest } from "../scripts/bench/cpu";

test("CPU per request is shared out per process group, largest first, and sums to the total", () => {
  const before = new Map([["gateway", 1000], ["operations", 500], ["bench", 10]]);
  const after = new Map([["gateway", 2100], ["operations", 1400], ["bench", 210], ["postgres", 100]]);
  expect(cpuPerRequest(before, after, 1000)).toBe("2.30 (gateway 1.10, operations 0.90, bench 0.20, postgres 0.10)");
  expect(cpuPerRequest(before, new Map([["bench", 20]]), 1000)).toBe("–");
});

test("the stack's CPU per request leaves out the bench's own (the load generator and webhook receiver)", () => {
  const before = new Map([["gateway", 1000], ["bench", 10]]);
  const after = new Map([["gateway", 2100], ["bench", 210], ["postgres", 100]]);
  expect(stackCpuPerRequest(before, after, 1000)).toBeCloseTo(1.2, 10);
  expect(stackCpuPerRequest(before, new Map([["bench", 20]]), 1000)).toBeUndefined();
});

test.each([
  ["services/operations/src/main.ts", "operations"],
  ["deploy/local/src/start.ts", "launcher"],
])("a process running %s is counted under %s", async (entry, group) => {
  // Burns 400 ms of its own CPU (however the machine schedules it), says so, then idles until
  // killed: its command line names the entry.
  const busy = `while (process.cpuUsage().user + process.cpuUsage().system < 400_000);
    console.log("burnt"); setInterval(() => undefined, 1000);`;
  const child = spawn(process.execPath, ["-e", busy, entry], { stdio: ["ignore", "pipe", "ignore"] });
  try {
    const before = cpuSnapshot();
    await new Promise((resolve) => child.stdout.once("data", resolve));
    const after = cpuSnapshot();
    // At most its start-up (well under 150 ms) was already counted in `before`.
    const groupMs = Number(new RegExp(`${group} (\\d+\\.\\d+)`).exec(cpuPerRequest(before, after, 1))?.[1]);
    expect(groupMs).toBeGreaterThanOrEqual(250);
    expect(after.get("bench")).toBeGreaterThan(0);
  } finally {
    child.kill();
  }
});
