/**
 * `start`: the whole gateway on one machine. Postgres (embedded, or DATABASE_URL) and NATS
 * (nats-server, or NATS_URL), then every unit as a child process, demo data on first start, and
 * one banner. Ctrl-C stops the units, then NATS, then Postgres; data stays in <repo>/.data.
 */
import fs from "node:fs";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { redactUrl } from "@pgw/kit/db";
import { natsServersShown } from "@pgw/kit/events";
import { demoServerKey, ensureDemoData, type DemoData } from "./demo-data";
import { startEmbeddedInfra, type EmbeddedInfra } from "./embedded-infra";
import { NatsServerMissingError } from "./nats-server";
import { releaseEmbeddedPostgresSignalHandlers } from "./embedded-postgres";
import { portFreeSoon } from "./free-port";
import { startReaper, type Reaper, type ReaperTarget } from "./reaper";
import { hasExited, isPidAlive, prefixLines, processCommandLine, signalPid, sleep, stopChild, stopPid } from "./process-utils";
import {
  UNITS,
  adminToken,
  localUrls,
  portOverrideVariable,
  readinessUrl,
  resolveUnitPorts,
  spawnUnit,
  unitEnvironment,
  type UnitPorts,
  type UnitSpec,
} from "./units";

const ROOT_DIR = path.resolve(__dirname, "..", "..", "..");
const DATA_DIR = path.join(ROOT_DIR, ".data");
const LOCK_FILE = path.join(DATA_DIR, "launcher.json");
const DEMO_FILE = path.join(DATA_DIR, "demo.json");
const READY_TIMEOUT_MS = 60_000;
/** How long a unit's port held by a closed connection is waited for (checkPortsFree): TIME_WAIT's 60 s and a margin. */
const PORT_WAIT_MS = 65_000;
// Longer than the notifier takes to let a webhook attempt in flight end (its 10 s timeout, plus 1 s).
const UNIT_STOP_GRACE_MS = 15_000;
/** How often the launcher checks that its embedded Postgres and nats-server still run. */
const INFRA_WATCH_MS = 1_000;
/** Repeats of a stop signal within this window are the same request (see Launcher.onSignal). */
const SIGNAL_REPEAT_WINDOW_MS = 2_000;

// A closed pipe (`pnpm start | head`) must not crash the launcher.
process.stdout.on("error", () => undefined);
process.stderr.on("error", () => undefined);

function say(line: string): void {
  process.stdout.write(`[start] ${line}\n`);
}
function complain(line: string): void {
  process.stderr.write(`[start] ${line}\n`);
}

const verbose = ["debug", "trace"].includes((process.env.LOG_LEVEL ?? "").toLowerCase());
/**
 * Refusals that are part of a normal start: a unit looks for its database by connecting to it
 * before creating it (first start), and units connect while Postgres still recovers from a crash
 * (they retry).
 */
const EXPECTED_POSTGRES_REFUSALS = /FATAL: {1,2}(database "pgw_\w+" does not exist|the database system is starting up)/;
/** Server output worth showing without LOG_LEVEL=debug: warnings and errors only. */
const postgresLog = (line: string) => {
  if (verbose || (/\b(WARNING|ERROR|FATAL|PANIC):/.test(line) && !EXPECTED_POSTGRES_REFUSALS.test(line))) process.stderr.write(`[postgres] ${line}\n`);
};
const natsLog = (line: string) => {
  if (verbose || /\[(WRN|ERR|FTL)\]/.test(line)) process.stderr.write(`[nats] ${line}\n`);
};

interface RunningUnit {
  spec: UnitSpec;
  child: ChildProcess;
}

/** Why start-up was abandoned; already explained to the user. */
class StartAborted extends Error {}

// ---------------------------------------------------------------- launcher lock and leftovers

interface LockFile {
  pid: number;
  startedAt: string;
  units: Record<string, number>;
}

function readLock(): LockFile | undefined {
  try {
    return JSON.parse(fs.readFileSync(LOCK_FILE, "utf8")) as LockFile;
  } catch {
    return undefined;
  }
}

/** The pid of each unit that has one, by name (as the lock file lists them). */
function unitPids(units: RunningUnit[]): LockFile["units"] {
  return Object.fromEntries(units.flatMap((u) => (u.child.pid === undefined ? [] : [[u.spec.name, u.child.pid]])));
}

/** Claims the data directory for this launcher, listing `units` (its own, or a dead launcher's leftovers). */
function writeLock(units: LockFile["units"]): void {
  const lock: LockFile = { pid: process.pid, startedAt: new Date().toISOString(), units };
  try {
    fs.writeFileSync(LOCK_FILE, `${JSON.stringify(lock, null, 2)}\n`);
  } catch {
    // only used to clean up after a launcher that was killed
  }
}

/**
 * Refuses to run twice on the same data; stops the units a killed launcher left running (they
 * would hold the ports). Embedded Postgres and nats-server clean up their own leftovers.
 */
async function takeOverDataDir(): Promise<void> {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const lock = readLock();
  if (lock) {
    if (lock.pid !== process.pid && isPidAlive(lock.pid) && (processCommandLine(lock.pid) ?? "").includes("start")) {
      complain(`another start is already running (pid ${lock.pid}) on ${DATA_DIR}; stop it first (Ctrl-C in its terminal, or kill ${lock.pid})`);
      throw new StartAborted("already running");
    }
    // Claimed before the slow clean-up below, so a second start meanwhile is refused; the
    // leftovers stay listed should this launcher die during it too.
    writeLock(lock.units ?? {});
    for (const [name, pid] of Object.entries(lock.units ?? {})) {
      const spec = UNITS.find((u) => u.name === name);
      const commandLine = processCommandLine(pid);
      if (spec && isPidAlive(pid) && commandLine !== undefined && commandLine.includes(spec.entry)) {
        say(`${name} of an earlier run (pid ${pid}) is still running; stopping it`);
        await stopPid(pid, "SIGTERM", UNIT_STOP_GRACE_MS);
      }
    }
  }
  writeLock({});
}

// ---------------------------------------------------------------- units

/**
 * Fails the start when something listens on a unit's port. The gRPC ports (5005x) lie in the
 * kernel's ephemeral range, so the local end of a closed outgoing connection (in TIME_WAIT for
 * 60 s, e.g. after the test suite) can hold one nobody listens on: that is waited for, up to
 * PORT_WAIT_MS.
 */
async function checkPortsFree(ports: UnitPorts): Promise<void> {
  const busy: string[] = [];
  for (const unit of UNITS) {
    for (const [variable, port] of Object.entries(ports[unit.name])) {
      const waiting = () => say(`port ${port} (${unit.name} ${variable}) is held by a closed connection's local end; waiting for it (up to a minute)`);
      if (!(await portFreeSoon(port, PORT_WAIT_MS, waiting))) busy.push(`  ${port} (${unit.name} ${variable}; choose another with ${portOverrideVariable(unit.name, variable)}=<port>)`);
    }
  }
  if (busy.length > 0) {
    complain(`ports needed by the units are already in use:\n${busy.join("\n")}`);
    throw new StartAborted("ports in use");
  }
}

/** Resolves when GET /readyz answers 204; rejects after the timeout, naming the unit. */
async function waitUntilReady(unit: RunningUnit, url: string, isStopping: () => boolean): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastAnswer = "no answer yet";
  for (;;) {
    // a unit exiting during start-up stops everything (see Launcher.spawn), which ends this wait
    if (isStopping() || hasExited(unit.child)) throw new StartAborted("stopping");
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer().catch(() => undefined);
      if (response.status === 204) return;
      lastAnswer = `HTTP ${response.status}`;
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      lastAnswer = cause?.code ?? (err instanceof Error ? err.message : String(err));
    }
    if (Date.now() >= deadline) {
      throw new Error(`${unit.spec.name} did not become ready within ${READY_TIMEOUT_MS / 1000} s (${url}: ${lastAnswer})`);
    }
    await sleep(250);
  }
}

function describeExit(child: ChildProcess): string {
  return child.signalCode !== null ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`;
}

function banner(ports: UnitPorts, token: string, infra: EmbeddedInfra, demo: DemoData | undefined): string {
  const urls = localUrls(ports);
  const apiKey = demo?.api_key ?? "<api key>";
  const rows: [string, string][] = [
    ["Merchant API", urls.PUBLIC_BASE_URL],
    ["Admin console", `${urls.ADMIN_BASE_URL}/admin`],
    ["Admin token", token],
    ["Demo shop", demo ? demo.shop_id : "(not created, see above)"],
    ["Demo API key", demo ? demo.api_key : "(not created, see above)"],
    ["Sandbox provider", urls.SANDBOX_URL],
    ["Postgres", `${redactUrl(infra.databaseUrl)}${infra.embedded.postgres ? " (embedded)" : ""}`],
    ["NATS", `${natsServersShown(infra.natsUrl)}${infra.embedded.nats ? " (embedded)" : ""}`],
    ["gRPC between units", process.env.GRPC_TLS_CA_FILE ? `mutual TLS (CA ${process.env.GRPC_TLS_CA_FILE})` : "plaintext (h2c)"],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const rule = "=".repeat(78);
  return [
    "",
    rule,
    "  Payment gateway is running (local mode)",
    "",
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
    "",
    "  Try:",
    `    curl -H 'X-API-Key: ${apiKey}' ${urls.PUBLIC_BASE_URL}/v1/balances`,
    "",
    `  Data in ${DATA_DIR}. Ctrl-C stops everything.`,
    rule,
    "",
  ].join("\n");
}

// ---------------------------------------------------------------- launcher

class Launcher {
  private infra: EmbeddedInfra | undefined;
  private infraStarting: Promise<EmbeddedInfra> | undefined;
  private reaper: Reaper | undefined;
  private readonly units: RunningUnit[] = [];
  private stopping = false;
  private started = false;

  async run(): Promise<void> {
    this.installSignalHandlers();
    const ports = resolveUnitPorts(process.env);
    const token = adminToken(process.env);

    await takeOverDataDir();
    await checkPortsFree(ports);
    this.reaper = startReaper(path.join(DATA_DIR, "reaper.log"));

    try {
      this.infraStarting = startEmbeddedInfra({
        rootDir: DATA_DIR,
        databaseUrl: nonEmpty(process.env.DATABASE_URL),
        natsUrl: nonEmpty(process.env.NATS_URL),
        log: say,
        postgresLog,
        natsLog,
        ownProcessGroups: true,
      });
      this.infra = await this.infraStarting;
    } finally {
      // embedded-postgres installs SIGINT/SIGTERM/SIGHUP handlers that stop Postgres at once and
      // exit; the launcher's own handlers stop the units first.
      releaseEmbeddedPostgresSignalHandlers();
    }
    this.watchChildren();
    this.watchInfra();
    if (this.stopping) throw new StartAborted("stopping");

    const context = { databaseServerUrl: this.infra.databaseUrl, natsUrl: this.infra.natsUrl, ports, baseEnv: process.env };
    const services = UNITS.filter((u) => u.kind === "service");
    const gateways = UNITS.filter((u) => u.kind === "gateway");
    for (const group of [services, gateways]) {
      if (this.stopping) throw new StartAborted("stopping");
      say(`starting ${group.map((u) => u.name).join(", ")}`);
      const running = group.map((spec) => this.spawn(spec, unitEnvironment(spec, context)));
      writeLock(unitPids(this.units));
      this.watchChildren();
      await Promise.all(
        running.map(async (unit) => {
          await waitUntilReady(unit, readinessUrl(unit.spec, ports), () => this.stopping);
          say(`${unit.spec.name} is ready`);
        }),
      );
    }

    const urls = localUrls(ports);
    const demo = await ensureDemoData({ adminBase: urls.ADMIN_BASE_URL, apiBase: urls.PUBLIC_BASE_URL, token, file: DEMO_FILE, serverKey: demoServerKey(this.infra), say }).catch((err: unknown) => {
      complain(`could not create the demo data: ${err instanceof Error ? err.message : String(err)}`);
      complain("the units keep running; create a shop and an API key in the admin console instead");
      return undefined;
    });
    if (this.stopping) return;
    this.started = true;
    process.stdout.write(banner(ports, token, this.infra, demo));
  }

  /**
   * Stops everything, as when a unit dies, when the embedded Postgres or nats-server goes away:
   * the units would otherwise keep running, not ready, with nothing said.
   */
  private watchInfra(): void {
    const servers = [
      ["Postgres", this.infra?.processes.postgres?.pid],
      ["nats-server", this.infra?.processes.nats?.pid],
    ] as const;
    const timer = setInterval(() => {
      if (this.stopping) return clearInterval(timer);
      const gone = servers.find(([, pid]) => pid !== undefined && !isPidAlive(pid));
      if (!gone) return;
      clearInterval(timer);
      complain(`the embedded ${gone[0]} (pid ${gone[1]}) stopped unexpectedly; stopping everything`);
      void this.shutdown(1);
    }, INFRA_WATCH_MS);
    timer.unref();
  }

  /** Tells the watchdog what to stop should the launcher be killed. */
  private watchChildren(): void {
    const targets: ReaperTarget[] = [];
    for (const unit of this.units) {
      if (unit.child.pid === undefined) continue;
      targets.push({ pid: unit.child.pid, match: unit.spec.entry, signal: "SIGTERM", graceMs: UNIT_STOP_GRACE_MS, stage: 0, group: true, name: unit.spec.name });
    }
    const { nats, postgres } = this.infra?.processes ?? {};
    if (nats) targets.push({ pid: nats.pid, match: nats.storeDir, signal: "SIGTERM", graceMs: 10_000, stage: 1, name: "nats-server" });
    if (postgres) targets.push({ pid: postgres.pid, match: postgres.dataDir, signal: "SIGINT", graceMs: 15_000, stage: 2, name: "postgres" });
    this.reaper?.watch(targets);
  }

  private spawn(spec: UnitSpec, env: NodeJS.ProcessEnv): RunningUnit {
    const child = spawnUnit(spec, { rootDir: ROOT_DIR, env });
    const unit: RunningUnit = { spec, child };
    this.units.push(unit);
    prefixLines(child.stdout, `[${spec.name}] `, process.stdout);
    prefixLines(child.stderr, `[${spec.name}] `, process.stderr);
    child.once("error", (err) => {
      if (this.stopping) return;
      complain(`${spec.name} could not be started: ${err.message}; stopping everything`);
      void this.shutdown(1);
    });
    child.once("exit", () => {
      if (this.stopping) return;
      // report after its last output lines (stdio closes shortly after the exit)
      let reported = false;
      const report = () => {
        if (reported || this.stopping) return;
        reported = true;
        const what = this.started ? "stopped unexpectedly" : "exited during start";
        complain(`${spec.name} ${what} (${describeExit(child)}); see its output above. Stopping everything`);
        void this.shutdown(1);
      };
      child.once("close", report);
      setTimeout(report, 500).unref();
    });
    return unit;
  }

  private firstSignalAt = 0;

  private readonly onSignal = (signal: NodeJS.Signals) => {
    if (this.firstSignalAt === 0) {
      this.firstSignalAt = Date.now();
      say(`${signal} received; stopping everything (press Ctrl-C again to force)`);
      void this.shutdown(0);
      return;
    }
    // The terminal signals the whole process group and wrappers (pnpm, tsx, timeout) forward the
    // same signal again: only a signal that comes later is a request to force.
    if (Date.now() - this.firstSignalAt < SIGNAL_REPEAT_WINDOW_MS) return;
    complain(`${signal} again: killing everything now`);
    this.killEverything();
    process.exit(1);
  };

  private installSignalHandlers(): void {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, this.onSignal);
  }

  /** Last resort when the launcher itself goes away: no unit or server outlives it. */
  killEverything(): void {
    for (const unit of this.units) {
      if (unit.child.pid !== undefined && !hasExited(unit.child)) signalPid(-unit.child.pid, "SIGKILL");
    }
  }

  terminateUnitsSync(): void {
    for (const unit of this.units) {
      if (unit.child.pid !== undefined && !hasExited(unit.child)) signalPid(unit.child.pid, "SIGTERM");
    }
  }

  private shuttingDown: Promise<never> | undefined;

  /** SIGTERM to every unit (SIGKILL after 10 s), then NATS, then Postgres; exits with `code`. */
  shutdown(code: number): Promise<never> {
    this.shuttingDown ??= (async () => {
      this.stopping = true;
      const live = this.units.filter((u) => !hasExited(u.child));
      if (live.length > 0) say(`stopping ${live.map((u) => u.spec.name).join(", ")}`);
      await Promise.all(
        live.map(async (unit) => {
          const { killed } = await stopChild(unit.child, { signal: "SIGTERM", graceMs: UNIT_STOP_GRACE_MS, processGroup: true });
          if (killed) complain(`${unit.spec.name} did not stop within ${UNIT_STOP_GRACE_MS / 1000} s; killed it`);
        }),
      );
      // a stop signal while Postgres / NATS are starting: let them come up, then stop them cleanly
      if (!this.infra && this.infraStarting) this.infra = await this.infraStarting.catch(() => undefined);
      if (this.infra) {
        const embedded = [this.infra.embedded.nats ? "nats-server" : "", this.infra.embedded.postgres ? "Postgres" : ""].filter(Boolean);
        if (embedded.length > 0) say(`stopping ${embedded.join(" and ")}`);
        await this.infra.stop();
      }
      try {
        const lock = readLock();
        if (lock?.pid === process.pid) fs.rmSync(LOCK_FILE, { force: true });
      } catch {
        // nothing to clean
      }
      say(code === 0 ? "stopped" : "stopped after an error");
      process.exit(code);
    })();
    return this.shuttingDown;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

async function main(): Promise<void> {
  const launcher = new Launcher();
  process.on("exit", () => launcher.terminateUnitsSync());
  process.on("uncaughtException", (err) => {
    complain(`internal error: ${err.stack ?? err.message}`);
    void launcher.shutdown(1);
  });
  process.on("unhandledRejection", (reason) => {
    complain(`internal error: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
    void launcher.shutdown(1);
  });
  try {
    await launcher.run();
  } catch (err) {
    if (err instanceof StartAborted) {
      // already explained (or a stop signal is being handled)
    } else if (err instanceof NatsServerMissingError) {
      complain(err.message);
    } else {
      complain(`start failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    // a stop signal during start-up ends with 0 (that shutdown is already under way)
    await launcher.shutdown(1);
  }
}

void main();
