import { spawn } from "node:child_process";
import path from "node:path";

const UNIT = path.join(__dirname, "fixtures", "run-main-unit.ts");

/** Runs the fixture unit, sends `signal` once it is up, and resolves to its exit code and output. */
function signalledRun(mode: "starting" | "started", signal: NodeJS.Signals): Promise<{ code: number | null; output: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", UNIT, mode], { stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    let sentAt = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (!sentAt && output.includes("up\n")) {
        sentAt = Date.now();
        child.kill(signal);
      }
    });
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, output, ms: Date.now() - sentAt }));
  });
}

describe("runMain", () => {
  it("exits at once on SIGTERM while the unit is still starting, with 143 since its start did not finish", async () => {
    const run = await signalledRun("starting", "SIGTERM");
    expect(run.code).toBe(143);
    expect(run.ms).toBeLessThan(2000);
  }, 20_000);

  it("exits 130 on SIGINT while starting", async () => {
    expect((await signalledRun("starting", "SIGINT")).code).toBe(130);
  }, 20_000);

  it("stops a started unit gracefully on SIGTERM and exits 0", async () => {
    const run = await signalledRun("started", "SIGTERM");
    expect(run.code).toBe(0);
    expect(run.output).toBe("up\nstopped\n");
  }, 20_000);
});
