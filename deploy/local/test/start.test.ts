/**
 * The launcher as `pnpm start` runs it, with its data in a directory of its own and every unit on
 * a free port: a unit, the embedded nats-server or Postgres killed with SIGKILL is started again
 * while the other units keep serving; Ctrl-C stops everything; a unit that never gets ready is
 * given up on.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { connect } from "nats";
import { freePortsForLater } from "../src/free-port";
import { canConnect, childExit, forEachLine, isPidAlive, stopChild, type ProcessExit } from "../src/process-utils";
import { UNITS, portOverrideVariable, type UnitName } from "../src/units";
import { pollUntil } from "../../../test/support/poll";

const ROOT = path.resolve(__dirname, "..", "..", "..");

interface Launcher {
  child: ChildProcess;
  /** Every line it wrote so far, stdout and stderr. */
  lines: string[];
  exited: Promise<ProcessExit>;
  /** Resolves with the index of the first line from `from` on that matches; rejects when the launcher exits first. */
  line(pattern: RegExp, from?: number, timeoutMs?: number): Promise<number>;
}

/** Every unit's ports, free ones below the ephemeral range, as the launcher's override variables. */
async function unitPorts(): Promise<{ env: Record<string, string>; port: (unit: UnitName, variable: string) => number }> {
  const variables = UNITS.flatMap((unit) => Object.keys(unit.ports).map((variable) => portOverrideVariable(unit.name, variable)));
  const ports = await freePortsForLater(variables.length);
  const env = Object.fromEntries(variables.map((name, i) => [name, String(ports[i])]));
  return { env, port: (unit, variable) => Number(env[portOverrideVariable(unit, variable)]) };
}

/** Starts `start.ts` in a process group of its own, as a terminal runs it. */
function startLauncher(env: Record<string, string | undefined>): Launcher {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "deploy/local/src/start.ts")], {
    cwd: ROOT,
    env: env as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  const onLine = (line: string) => {
    lines.push(line);
    for (const check of waiters) check();
  };
  forEachLine(child.stdout, onLine);
  forEachLine(child.stderr, onLine);
  const exited = childExit(child);
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
    for (const check of waiters) check();
  });
  const line = (pattern: RegExp, from = 0, timeoutMs = 60_000) =>
    new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => finish(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs / 1000} s; last lines:\n${lines.slice(-30).join("\n")}`))), timeoutMs);
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      const check = () => {
        const index = lines.findIndex((text, i) => i >= from && pattern.test(text));
        if (index >= 0) finish(() => resolve(index));
        else if (hasExited) finish(() => reject(new Error(`the launcher exited before a line matching ${pattern}; last lines:\n${lines.slice(-30).join("\n")}`)));
      };
      waiters.add(check);
      check();
    });
  return { child, lines, exited, line };
}

/** Stops a launcher a failed test left running (its watchdog stops the units should it be killed). */
async function stopLeftover(launcher: Launcher | undefined): Promise<void> {
  if (launcher) await stopChild(launcher.child, { signal: "SIGTERM", graceMs: 30_000 });
}

/** GET `url`: the status and the failing checks a not-ready unit names, or the error code when nothing answered. */
async function probe(url: string, headers: Record<string, string> = {}): Promise<{ status: number; failing: string } | { error: string }> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
    return { status: response.status, failing: response.headers.get("x-failing-checks") ?? "" };
  } catch (err) {
    return { error: String((err as { cause?: { code?: string } }).cause?.code ?? err) };
  }
}

const readyz = (port: number) => probe(`http://127.0.0.1:${port}/readyz`);
const readNumber = (file: string) => Number(fs.readFileSync(file, "utf8").split("\n")[0].trim());
const unitPidsIn = (dataDir: string): Record<string, number> => JSON.parse(fs.readFileSync(path.join(dataDir, "launcher.json"), "utf8")).units;

describe("start", () => {
  let dir: string;
  let launcher: Launcher | undefined;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "pgw-start-"));
  });
  afterEach(async () => {
    await stopLeftover(launcher);
    launcher = undefined;
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("restarts a killed unit, nats-server and Postgres while the other units keep serving; Ctrl-C stops everything", async () => {
    const dataDir = path.join(dir, "data");
    const { env: portEnv, port } = await unitPorts();
    const env: Record<string, string | undefined> = { ...process.env, ...portEnv, START_DATA_DIR: dataDir, LOG_LEVEL: "warn" };
    // the embedded servers, whatever the test run itself uses
    delete env.DATABASE_URL;
    delete env.NATS_URL;
    launcher = startLauncher(env);
    const { line, lines } = launcher;
    await line(/Payment gateway is running/, 0, 150_000);

    // kill -9 operations: restarted on its ports after 1 s, while the gateway answers that it
    // lacks operations and the ledger stays ready
    const operationsPid = unitPidsIn(dataDir).operations;
    process.kill(operationsPid, "SIGKILL");
    const exitedAt = await line(/^\[start\] operations exited \(signal SIGKILL\); restarting in 1 s \(restart 1\)$/);
    const [gateway, ledger] = await Promise.all([readyz(port("gateway", "HEALTH_PORT")), readyz(port("ledger", "HEALTH_PORT"))]);
    expect(gateway).toEqual({ status: 503, failing: "operations" });
    expect(ledger).toEqual({ status: 204, failing: "" });
    await line(/^\[start\] operations is ready again$/, exitedAt);
    expect(unitPidsIn(dataDir).operations).not.toBe(operationsPid);
    expect(await readyz(port("operations", "HEALTH_PORT"))).toEqual({ status: 204, failing: "" });
    expect(await pollUntil(() => readyz(port("gateway", "HEALTH_PORT")), (answer) => "status" in answer && answer.status === 204)).toEqual({ status: 204, failing: "" });

    // kill -9 nats-server: restarted on the same port with its JetStream store, and the units reconnect
    const natsDir = path.join(dataDir, "nats");
    const natsPort = readNumber(path.join(natsDir, "pgw-port"));
    const natsPid = readNumber(path.join(natsDir, "nats-server.pid"));
    const nc = await connect({ servers: `nats://127.0.0.1:${natsPort}`, timeout: 5_000 });
    const streamCreated = (await (await nc.jetstreamManager()).streams.info("PGW")).created;
    await nc.close();
    process.kill(natsPid, "SIGKILL");
    const natsExitedAt = await line(/^\[start\] nats-server exited \(signal SIGKILL\); restarting in 1 s \(restart 1\)$/);
    await line(new RegExp(`^\\[start\\] nats-server is up again on 127\\.0\\.0\\.1:${natsPort}$`), natsExitedAt);
    expect(readNumber(path.join(natsDir, "nats-server.pid"))).not.toBe(natsPid);
    const nc2 = await connect({ servers: `nats://127.0.0.1:${natsPort}`, timeout: 5_000 });
    expect((await (await nc2.jetstreamManager()).streams.info("PGW")).created).toBe(streamCreated);
    await nc2.close();
    expect(await pollUntil(() => readyz(port("ledger", "HEALTH_PORT")), (answer) => "status" in answer && answer.status === 204, 30_000)).toEqual({ status: 204, failing: "" });

    // kill -9 the postmaster: restarted on the same port and data (the demo shop's key still
    // works), and the units reconnect
    const postgresDir = path.join(dataDir, "postgres");
    const postgresPort = readNumber(path.join(postgresDir, "pgw-port"));
    const apiKey = lines.find((text) => text.includes("Demo API key"))!.split(/\s+/).at(-1)!;
    expect(lines.find((text) => text.includes("Demo webhook secret"))).toMatch(/whsec_\S+$/);
    expect(lines.find((text) => text.includes("Demo webhook URL"))).toMatch(/http:\/\/127\.0\.0\.1:\d+\/webhooks/);
    const balances = () => probe(`http://127.0.0.1:${port("gateway", "HTTP_PORT")}/v1/balances`, { "x-api-key": apiKey });
    expect(await balances()).toMatchObject({ status: 200 });
    process.kill(readNumber(path.join(postgresDir, "postmaster.pid")), "SIGKILL");
    const postgresExitedAt = await line(/^\[start\] Postgres exited \(signal SIGKILL\); restarting in 1 s \(restart 1\)$/);
    await line(new RegExp(`^\\[start\\] Postgres is up again on 127\\.0\\.0\\.1:${postgresPort}$`), postgresExitedAt);
    expect(await pollUntil(balances, (answer) => "status" in answer && answer.status === 200, 30_000)).toMatchObject({ status: 200 });

    // Ctrl-C, as a terminal sends it to the launcher's process group: everything stops, nothing restarts
    const running = [...Object.values(unitPidsIn(dataDir)), readNumber(path.join(natsDir, "nats-server.pid")), readNumber(path.join(dataDir, "postgres", "postmaster.pid"))];
    expect(running).toHaveLength(UNITS.length + 2);
    process.kill(-launcher.child.pid!, "SIGINT");
    expect(await launcher.exited).toEqual({ code: 0, signal: null });
    const stopAt = lines.findIndex((text) => text.startsWith("[start] SIGINT received"));
    expect(stopAt).toBeGreaterThan(postgresExitedAt);
    expect(lines.slice(stopAt).filter((text) => text.startsWith("[start]") && /restarting|exited/.test(text))).toEqual([]);
    expect(lines).toContain("[start] stopped");
    expect(running.filter(isPidAlive)).toEqual([]);
    expect(await canConnect(port("gateway", "HTTP_PORT"))).toBe(false);
    expect(await canConnect(natsPort)).toBe(false);
    expect(fs.existsSync(path.join(dataDir, "launcher.json"))).toBe(false);
  }, 240_000);

  test("a unit that exits before it is ready five times in a row stops the launcher, quoting its last lines", async () => {
    const { env: portEnv } = await unitPorts();
    launcher = startLauncher({
      ...process.env,
      ...portEnv,
      START_DATA_DIR: path.join(dir, "failing"),
      // no servers are started (the units never get to use them), and every service refuses this value at start
      DATABASE_URL: "postgres://postgres@127.0.0.1:1/postgres",
      NATS_URL: "nats://127.0.0.1:1",
      LOG_LEVEL: "loud",
    });
    const { lines } = launcher;
    expect(await launcher.exited).toEqual({ code: 1, signal: null });
    const givenUp = lines.find((text) => /it failed to start 5 times in a row, so it is not started again$/.test(text));
    expect(givenUp).toMatch(/^\[start\] (\S+) exited \(exit code 1\); it failed to start 5 times in a row/);
    const unit = givenUp!.split(" ")[1];
    const notices = lines.filter((text) => text.startsWith(`[start] ${unit} exited`));
    expect(notices).toEqual([
      `[start] ${unit} exited (exit code 1); restarting in 1 s (restart 1)`,
      `[start] ${unit} exited (exit code 1); restarting in 2 s (restart 2)`,
      `[start] ${unit} exited (exit code 1); restarting in 4 s (restart 3)`,
      `[start] ${unit} exited (exit code 1); restarting in 8 s (restart 4)`,
      givenUp,
    ]);
    const quoted = lines.slice(lines.indexOf(`[start] ${unit}'s last lines:`) + 1);
    expect(quoted.find((text) => text.startsWith(`  [${unit}] `) && text.includes("invalid configuration: LOG_LEVEL"))).toBeDefined();
    expect(lines).toContain("[start] stopped after an error");
  }, 120_000);
});
