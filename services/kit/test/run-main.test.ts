import { spawn } from "node:child_process";
import path from "node:path";

const UNIT = path.join(__dirname, "fixtures", "run-main-unit.ts");

/** Runs the fixture unit, sends `signal` once it is up, and resolves to its exit code and output. */
function signalledRun(mode: "starting" | "started" | "logging", signal: NodeJS.Signals, options: { closeOutputFirst?: boolean } = {}): Promise<{ code: number | null; output: string; errors: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", UNIT, mode], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let errors = "";
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    let up = false;
    let sentAt = 0;
    const send = () => {
      sentAt = Date.now();
      child.kill(signal);
      // A unit that does not exit fails its test (by the time asserted), and is not left behind.
      setTimeout(() => child.kill("SIGKILL"), 5000).unref();
    };
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (up || !output.includes("up")) return;
      up = true;
      if (!options.closeOutputFirst) return send();
      // A reader that went away (a killed launcher): once our ends of its pipes are closed, the
      // unit's next lines meet a broken pipe.
      const gone = [child.stdout, child.stderr].map((stream) => new Promise((r) => stream.once("close", r)));
      child.stdout.destroy();
      child.stderr.destroy();
      void Promise.all(gone).then(send);
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output, errors, ms: Date.now() - sentAt }));
  });
}

describe("runMain", () => {
  it("exits at once on SIGTERM while the unit is still starting, with 143 since its start did not finish", async () => {
    const run = await signalledRun("starting", "SIGTERM");
    expect(run.code).toBe(143);
    expect(run.errors).toBe("SIGTERM received; exiting before the start finished\n");
    expect(run.ms).toBeLessThan(2000);
  }, 20_000);

  it("exits 130 on SIGINT while starting", async () => {
    expect((await signalledRun("starting", "SIGINT")).code).toBe(130);
  }, 20_000);

  it("stops gracefully on SIGTERM although whoever read its output has gone (its last lines meet a broken pipe)", async () => {
    const run = await signalledRun("logging", "SIGTERM", { closeOutputFirst: true });
    expect(run.code).toBe(0);
    expect(run.ms).toBeLessThan(3000);
  }, 20_000);

  it("writes the log lines a unit's stop logged just before it exits (they were still being gathered)", async () => {
    const run = await signalledRun("logging", "SIGTERM");
    expect(run.code).toBe(0);
    const messages = run.output.trim().split("\n").map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual(["up", "fixture stopping", "fixture stopped"]);
  }, 20_000);

  it("stops a started unit gracefully on SIGTERM and exits 0", async () => {
    const run = await signalledRun("started", "SIGTERM");
    expect(run.code).toBe(0);
    expect(run.output).toBe("up\nstopped\n");
    expect(run.errors).toBe("SIGTERM received; stopping\n");
  }, 20_000);
});
