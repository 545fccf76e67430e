/**
 * `pnpm chaos` in short (CHAOS_DURATION_S=60): the script starts its own local stack (its own data
 * directory, free ports), kills every unit, nats-server and Postgres once under load, and must find
 * every invariant held.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePortsForLater } from "../deploy/local/src/free-port";
import { childExit, forEachLine } from "../deploy/local/src/process-utils";
import { UNITS, portOverrideVariable } from "../deploy/local/src/units";

const ROOT = path.resolve(__dirname, "..");

test("pnpm chaos: every invariant holds while each unit, nats-server and Postgres is killed under load", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pgw-chaos-"));
  const variables = UNITS.flatMap((unit) => Object.keys(unit.ports).map((variable) => portOverrideVariable(unit.name, variable)));
  const ports = await freePortsForLater(variables.length);
  const env: NodeJS.ProcessEnv = { ...process.env, ...Object.fromEntries(variables.map((name, i) => [name, String(ports[i])])), START_DATA_DIR: dir, CHAOS_DURATION_S: "60", CHAOS_SETTLE_S: "90", LOG_LEVEL: "warn" };
  // the embedded servers, whatever the test run itself uses
  delete env.DATABASE_URL;
  delete env.NATS_URL;
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/chaos.ts")], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  forEachLine(child.stdout!, (line) => lines.push(line));
  forEachLine(child.stderr!, (line) => lines.push(line));
  try {
    const exit = await childExit(child);
    const report = lines.filter((line) => line.startsWith("[chaos]"));
    expect({ exit, report }).toMatchObject({ exit: { code: 0 } });
    expect(report.find((line) => line.startsWith("[chaos] killed:"))).toBe(
      "[chaos] killed: operations, routing, ledger, receipts, notifier, gateway, provider-sandbox, nats-server, Postgres",
    );
    const counts = report.flatMap((line) => /^\[chaos\] (ok {2}|MISS) (.+): (\d+) checked, (\d+) missed$/.exec(line) ?? []).length;
    expect(counts).toBe(8 * 5);
    for (const line of report.filter((l) => / checked, \d+ missed$/.test(l))) expect(line).toMatch(/^\[chaos\] ok {2}.*, 0 missed$/);
    const created = Number(/(\d+) answered 200/.exec(report.find((l) => l.includes("load done")) ?? "")?.[1]);
    expect(created).toBeGreaterThan(100);
    expect(report).toContain("[chaos] all invariants held");
  } finally {
    if (child.exitCode === null) child.kill("SIGINT");
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 400_000);
