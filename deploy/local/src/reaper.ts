import fs from "node:fs";
import { spawn, type ChildProcess } from "node:child_process";

/**
 * One process the reaper stops if the launcher dies without stopping it (kill -9, a wrapper that
 * force-kills it). Stages run in order: units, then NATS, then Postgres.
 */
export interface ReaperTarget {
  pid: number;
  /** Text its command line must contain (guards against a reused pid). */
  match: string;
  /** First signal; SIGKILL follows after `graceMs`. */
  signal: NodeJS.Signals;
  graceMs: number;
  /** Lower stages are stopped first. */
  stage: number;
  /** Kill its whole process group on SIGKILL. */
  group?: boolean;
  /** Name for the reaper's log. */
  name: string;
}

// Plain JavaScript, run with `node -e`: needs nothing but Node. It reads the current target list
// (one JSON line per update) on stdin; stdin closes when the launcher exits, however it exits.
// After a clean stop every target is gone already and it exits at once.
const REAPER_SOURCE = String.raw`
const fs = require("fs");
let targets = [];
let buffer = "";
const log = (line) => { try { process.stderr.write(new Date().toISOString() + " " + line + "\n"); } catch {} };
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === "EPERM"; } };
const matches = (t) => {
  try { return fs.readFileSync("/proc/" + t.pid + "/cmdline", "utf8").split("\0").join(" ").includes(t.match); }
  catch { return !fs.existsSync("/proc/self") && alive(t.pid); }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const signal = (pid, sig) => { try { process.kill(pid, sig); } catch {} };
process.on("SIGINT", () => {});
process.on("SIGHUP", () => {});
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
    const line = buffer.slice(0, i);
    buffer = buffer.slice(i + 1);
    try { const m = JSON.parse(line); if (Array.isArray(m.targets)) targets = m.targets; } catch {}
  }
});
let reaping = false;
const reap = async () => {
  if (reaping) return;
  reaping = true;
  const stages = [...new Set(targets.map((t) => t.stage))].sort((a, b) => a - b);
  for (const stage of stages) {
    const live = targets.filter((t) => t.stage === stage && alive(t.pid) && matches(t));
    if (live.length === 0) continue;
    for (const t of live) { log("the launcher went away; stopping " + t.name + " (pid " + t.pid + ")"); signal(t.pid, t.signal); }
    const deadline = Date.now() + Math.max(...live.map((t) => t.graceMs));
    while (Date.now() < deadline && live.some((t) => alive(t.pid))) await sleep(100);
    for (const t of live) if (alive(t.pid)) { log("killing " + t.name + " (pid " + t.pid + ")"); signal(t.group ? -t.pid : t.pid, "SIGKILL"); signal(t.pid, "SIGKILL"); }
  }
  process.exit(0);
};
process.stdin.on("end", reap);
process.stdin.on("close", reap);
process.stdin.on("error", reap);
`;

export interface Reaper {
  /** Replaces the list of processes to stop should the launcher die. */
  watch(targets: ReaperTarget[]): void;
}

/**
 * Starts a small detached watchdog process. If the launcher dies without stopping its units and
 * servers, it stops them (units first, Postgres last). Its log goes to `logFile`.
 */
export function startReaper(logFile: string): Reaper {
  let child: ChildProcess | undefined;
  try {
    const logFd = fs.openSync(logFile, "a");
    child = spawn(process.execPath, ["-e", REAPER_SOURCE], { stdio: ["pipe", "ignore", logFd], detached: true });
    fs.closeSync(logFd);
    child.on("error", () => (child = undefined));
    child.stdin?.on("error", () => undefined);
    child.unref();
    // The pipe must not keep the launcher alive either.
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  } catch {
    child = undefined; // a missing watchdog only matters if the launcher is killed
  }
  return {
    watch(targets) {
      child?.stdin?.write(`${JSON.stringify({ targets })}\n`);
    },
  };
}
