/**
 * kill -9 of each unit of the local stack in turn, then nats-server and Postgres, spaced evenly
 * over the run. The pids come from where the launcher keeps them (as deploy/local/test/start.test.ts
 * finds them): its lock file for the units, the servers' own pid files.
 */
import fs from "node:fs";
import path from "node:path";
import { sleep } from "./http";

export const TARGETS = ["operations", "routing", "ledger", "receipts", "notifier", "gateway", "provider-sandbox", "nats-server", "Postgres"] as const;

const firstNumber = (file: string) => Number(fs.readFileSync(file, "utf8").split("\n")[0].trim());

export function pidOf(dataDir: string, target: (typeof TARGETS)[number]): number {
  if (target === "nats-server") return firstNumber(path.join(dataDir, "nats", "nats-server.pid"));
  if (target === "Postgres") return firstNumber(path.join(dataDir, "postgres", "postmaster.pid"));
  const pid = JSON.parse(fs.readFileSync(path.join(dataDir, "launcher.json"), "utf8")).units[target];
  if (typeof pid !== "number") throw new Error(`${target} is not running (no pid in the launcher's lock file)`);
  return pid;
}

/** Kills every target once over `durationMs` (the first after one gap, the last one gap before the end). */
export async function killInTurn(dataDir: string, durationMs: number, log: (line: string) => void): Promise<string[]> {
  const gap = durationMs / (TARGETS.length + 1);
  const killed: string[] = [];
  for (const target of TARGETS) {
    await sleep(gap);
    try {
      const pid = pidOf(dataDir, target);
      process.kill(pid, "SIGKILL");
      killed.push(target);
      log(`kill -9 ${target} (pid ${pid})`);
    } catch (err) {
      log(`could not kill ${target}: ${(err as Error).message}`);
    }
  }
  return killed;
}
