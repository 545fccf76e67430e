import fs from "node:fs";
import net from "node:net";
import readline from "node:readline";
import type { ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** True while a process with this pid exists (also when it belongs to another user). */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The command line of a running process (Linux /proc), arguments joined by spaces; undefined elsewhere. */
export function processCommandLine(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return undefined;
  }
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on every Linux build in use). */
const TICKS_PER_SECOND = 100;

/** User and system CPU time of a process so far, in ms (Linux /proc); undefined elsewhere or once it ended. */
export function processCpuTimesMs(pid: number): { userMs: number; systemMs: number } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { userMs: (Number(fields[11]) * 1000) / TICKS_PER_SECOND, systemMs: (Number(fields[12]) * 1000) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/** User + system CPU time of a process so far, in ms (Linux /proc); undefined elsewhere or once it ended. */
export function processCpuMs(pid: number): number | undefined {
  const times = processCpuTimesMs(pid);
  return times && times.userMs + times.systemMs;
}

/** True when the child process has exited (or was killed). */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** How a process ended: its exit code, or the signal that ended it. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Resolves once the child has exited (at once when it already has), with how. */
export function childExit(child: ChildProcess): Promise<ProcessExit> {
  if (hasExited(child)) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/** `signal SIGKILL` or `exit code 1`. */
export function describeExit(exit: ProcessExit): string {
  return exit.signal !== null ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}

/** Resolves true once the child has exited, false when `timeoutMs` passes first. */
export function waitForChildExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (hasExited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off("exit", onExit);
      resolve(hasExited(child));
    }, timeoutMs);
    const onExit = () => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once("exit", onExit);
  });
}

/** Resolves true once no process has this pid any more, false when `timeoutMs` passes first. */
export async function waitForPidExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isPidAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
  return true;
}

/** Sends a signal, ignoring "no such process". Negative pids address a process group. */
export function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Stops a child: `signal` first, SIGKILL (to its whole process group when it leads one) when it is
 * still running after `graceMs`. Resolves once it has exited.
 */
export async function stopChild(
  child: ChildProcess,
  options: { signal?: NodeJS.Signals; graceMs?: number; processGroup?: boolean } = {},
): Promise<{ killed: boolean }> {
  const { signal = "SIGTERM", graceMs = 10_000, processGroup = false } = options;
  if (hasExited(child) || child.pid === undefined) return { killed: false };
  signalPid(child.pid, signal);
  if (await waitForChildExit(child, graceMs)) return { killed: false };
  if (processGroup) signalPid(-child.pid, "SIGKILL");
  signalPid(child.pid, "SIGKILL");
  await waitForChildExit(child, 5_000);
  return { killed: true };
}

/** Stops a process known only by pid (a leftover of an earlier run): `signal`, then SIGKILL. */
export async function stopPid(pid: number, signal: NodeJS.Signals = "SIGTERM", graceMs = 10_000): Promise<void> {
  if (!isPidAlive(pid)) return;
  signalPid(pid, signal);
  if (await waitForPidExit(pid, graceMs)) return;
  signalPid(pid, "SIGKILL");
  await waitForPidExit(pid, 5_000);
}

/** True when a TCP connection to host:port succeeds. */
export function canConnect(port: number, host = "127.0.0.1", timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (ok: boolean) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * Polls until host:port accepts TCP connections. `failure` is checked on every round; when it
 * returns a message (e.g. "the process exited"), waiting stops with that error.
 */
export async function waitForPort(
  port: number,
  options: { host?: string; timeoutMs?: number; failure?: () => string | undefined; what?: string } = {},
): Promise<void> {
  const { host = "127.0.0.1", timeoutMs = 20_000, failure, what = `${host}:${port}` } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failed = failure?.();
    if (failed !== undefined) throw new Error(failed);
    if (await canConnect(port, host)) return;
    if (Date.now() >= deadline) throw new Error(`${what} did not accept connections within ${Math.round(timeoutMs / 1000)} s`);
    await sleep(100);
  }
}

/** Calls `onLine` for every line of a stream (without the line break). */
export function forEachLine(stream: Readable | null | undefined, onLine: (line: string) => void): void {
  if (!stream) return;
  const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
  rl.on("line", onLine);
}

/**
 * Copies a stream's lines to `out`, each after `prefix`, one write per chunk read rather than per
 * line: a unit writes its log lines in batches, and a write per line cost the launcher about
 * 0.08 ms of CPU a line, on the cores the units share. An unfinished last line waits for its end.
 */
export function prefixLines(stream: Readable | null | undefined, prefix: string, out: { write(text: string): unknown }): void {
  if (!stream) return;
  let rest = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    const text = rest + chunk;
    const end = text.lastIndexOf("\n");
    if (end < 0) {
      rest = text;
      return;
    }
    rest = text.slice(end + 1);
    out.write(`${prefix}${text.slice(0, end).replace(/\r?\n/g, `\n${prefix}`).replace(/\r$/, "")}\n`);
  });
  stream.on("end", () => {
    if (rest !== "") out.write(`${prefix}${rest}\n`);
    rest = "";
  });
}

/**
 * Keeps the last lines of a process's output, to quote them when it fails. Text is kept as written
 * (a chunk holds at least one line, so `max` chunks hold the last `max` lines) and split only when
 * quoted: the launcher feeds it every chunk a unit writes.
 */
export class OutputTail {
  private readonly chunks: string[] = [];
  constructor(private readonly max = 40) {}

  push(text: string): void {
    this.chunks.push(text);
    if (this.chunks.length > this.max) this.chunks.shift();
  }

  /** The last `max` lines that are not blank, or fewer. */
  lines(max = this.max): string[] {
    return this.chunks
      .join("\n")
      .split(/\r?\n/)
      .filter((line) => line.trim() !== "")
      .slice(-max);
  }

  toString(): string {
    return this.lines().join("\n");
  }
}
