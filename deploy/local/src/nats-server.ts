import fs from "node:fs";
import path from "node:path";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { freePort } from "./free-port";
import {
  OutputTail,
  childExit,
  forEachLine,
  hasExited,
  isPidAlive,
  processCommandLine,
  signalPid,
  stopChild,
  stopPid,
  waitForPort,
  type ProcessExit,
} from "./process-utils";

export interface NatsServerOptions {
  /** JetStream store directory (created when missing, reused afterwards). */
  storeDir: string;
  /** A fixed port; by default the port of the previous run when free, else any free port (never 4222). */
  port?: number;
  /** Receives the server's output, line by line. Default: dropped. */
  log?: (line: string) => void;
  /** Messages of this module itself (installing nats-server, stopping a leftover server). Default: stderr. */
  notice?: (message: string) => void;
  /** Install nats-server with apt-get when it is missing and this is Debian as root (default true). */
  install?: boolean;
  /** How long the server may take to accept connections (default 20 s). */
  startTimeoutMs?: number;
  /**
   * Run nats-server in a process group of its own, so a terminal Ctrl-C reaches only the launcher,
   * which stops NATS after the units. Default false (it then gets the Ctrl-C too).
   */
  ownProcessGroup?: boolean;
}

export interface NatsServer {
  /** e.g. nats://127.0.0.1:39417 */
  url: string;
  port: number;
  pid: number | undefined;
  storeDir: string;
  /** Resolves once the server has exited, however (also after `stop()`). */
  exited: Promise<ProcessExit>;
  stop(): Promise<void>;
}

/** nats-server is not installed and could not be installed here; the message says how to. */
export class NatsServerMissingError extends Error {}

export const PORT_FILE = "pgw-port";
export const PID_FILE = "nats-server.pid";

const INSTALL_HELP =
  "nats-server was not found (looked in PATH and /usr/sbin). Install it:\n" +
  "  Debian/Ubuntu: apt-get install nats-server\n" +
  "  macOS:         brew install nats-server\n" +
  "  elsewhere:     https://docs.nats.io/running-a-nats-service/introduction/installation\n" +
  "or set NATS_URL to a running NATS server with JetStream enabled.";

const EXTRA_DIRS = ["/usr/sbin", "/usr/local/sbin", "/usr/local/bin", "/usr/bin", "/opt/homebrew/bin"];

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Absolute path of the nats-server binary (PATH first, then /usr/sbin and friends), or undefined. */
export function findNatsServer(): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter).filter(Boolean), ...EXTRA_DIRS];
  for (const dir of dirs) {
    const candidate = path.join(dir, "nats-server");
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function canInstallWithApt(): boolean {
  return fs.existsSync("/etc/debian_version") && typeof process.getuid === "function" && process.getuid() === 0;
}

function aptGet(args: string[], log: (line: string) => void): boolean {
  log(`running: apt-get ${args.join(" ")}`);
  const result = spawnSync("apt-get", args, {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return result.status === 0;
}

/**
 * The nats-server binary. When it is missing: on Debian as root it is installed with apt-get;
 * anywhere else a NatsServerMissingError explains how to install it.
 */
export function ensureNatsServer(options: { install?: boolean; log?: (line: string) => void } = {}): string {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const found = findNatsServer();
  if (found) return found;
  if (options.install === false || !canInstallWithApt()) throw new NatsServerMissingError(INSTALL_HELP);
  log("nats-server is missing; installing it with apt-get (Debian, running as root)");
  // The package lists may be missing or stale (fresh containers): update and retry once.
  if (!aptGet(["install", "-y", "nats-server"], log)) {
    aptGet(["update"], log);
    aptGet(["install", "-y", "nats-server"], log);
  }
  const installed = findNatsServer();
  if (!installed) throw new NatsServerMissingError(`apt-get could not install nats-server.\n${INSTALL_HELP}`);
  return installed;
}

function readNumber(file: string): number | undefined {
  try {
    const value = Number(fs.readFileSync(file, "utf8").trim());
    return Number.isInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A nats-server of an earlier run that was never stopped still uses the store directory: stop it. */
async function stopLeftoverServer(storeDir: string, log: (line: string) => void): Promise<void> {
  const pid = readNumber(path.join(storeDir, PID_FILE));
  if (pid === undefined || !isPidAlive(pid)) return;
  const commandLine = processCommandLine(pid);
  if (commandLine === undefined || !commandLine.includes("nats-server") || !commandLine.includes(storeDir)) return;
  log(`a nats-server of an earlier run (pid ${pid}) still uses ${storeDir}; stopping it`);
  await stopPid(pid, "SIGTERM", 10_000);
}

/** Every nats-server started here, so they die with this process even when it exits abruptly. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;
function killOnExit(child: ChildProcess): void {
  running.add(child);
  child.once("exit", () => running.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const server of running) if (server.pid !== undefined && !hasExited(server)) signalPid(server.pid, "SIGTERM");
  });
}

async function startOnce(
  binary: string,
  storeDir: string,
  port: number,
  log: (line: string) => void,
  timeoutMs: number,
  detached: boolean,
): Promise<ChildProcess> {
  const tail = new OutputTail();
  const child = spawn(binary, ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDir, "-P", path.join(storeDir, PID_FILE)], {
    stdio: ["ignore", "pipe", "pipe"],
    detached,
  });
  killOnExit(child);
  let spawnError: Error | undefined;
  child.once("error", (err) => (spawnError = err));
  const onLine = (line: string) => {
    tail.push(line);
    log(line);
  };
  forEachLine(child.stdout, onLine);
  forEachLine(child.stderr, onLine);
  try {
    await waitForPort(port, {
      timeoutMs,
      what: `nats-server (port ${port})`,
      failure: () =>
        spawnError
          ? `nats-server could not be started: ${spawnError.message}`
          : hasExited(child)
            ? `nats-server exited during start (code ${child.exitCode ?? child.signalCode})`
            : undefined,
    });
  } catch (err) {
    await stopChild(child, { graceMs: 2_000 });
    const output = tail.toString();
    throw new Error(`${(err as Error).message}${output ? `\n--- nats-server output ---\n${output}` : ""}`);
  }
  return child;
}

/**
 * Starts `nats-server -js` (from PATH or /usr/sbin) on 127.0.0.1 with its JetStream store in
 * `storeDir`, and resolves once its port accepts connections. `stop()` ends it (SIGTERM, SIGKILL
 * after 10 s) and keeps the store.
 */
export async function startNatsServer(options: NatsServerOptions): Promise<NatsServer> {
  const storeDir = path.resolve(options.storeDir);
  const log = options.log ?? (() => undefined);
  const notice = options.notice ?? ((message: string) => process.stderr.write(`${message}\n`));
  const binary = ensureNatsServer({ install: options.install, log: notice });
  fs.mkdirSync(storeDir, { recursive: true });
  await stopLeftoverServer(storeDir, notice);

  const attempts = options.port === undefined ? 3 : 1;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = options.port ?? (await freePort(attempt === 0 ? readNumber(path.join(storeDir, PORT_FILE)) : undefined));
    let child: ChildProcess;
    try {
      child = await startOnce(binary, storeDir, port, log, options.startTimeoutMs ?? 20_000, options.ownProcessGroup ?? false);
    } catch (err) {
      lastError = err;
      continue;
    }
    try {
      fs.writeFileSync(path.join(storeDir, PORT_FILE), `${port}\n`);
    } catch {
      // only a preference for the next start
    }
    let stopped: Promise<void> | undefined;
    const stop = () => {
      stopped ??= stopChild(child, { signal: "SIGTERM", graceMs: 10_000, processGroup: options.ownProcessGroup ?? false }).then(() => undefined);
      return stopped;
    };
    return { url: `nats://127.0.0.1:${port}`, port, pid: child.pid, storeDir, exited: childExit(child), stop };
  }
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}
