import v8 from "node:v8";
import vm from "node:vm";
import { timeoutSignal } from "./http";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

/** Resolves to what ended the signal (its reason's name) and when, or "not fired" after `waitMs`. */
function outcome(signal: AbortSignal, waitMs: number): Promise<string> {
  const started = Date.now();
  return new Promise((resolve) => {
    signal.addEventListener("abort", () => resolve(`${(signal.reason as Error).name} after ${Date.now() - started >= 150 ? "≥150" : "<150"} ms`));
    setTimeout(() => resolve("not fired"), waitMs);
  });
}

describe("timeoutSignal", () => {
  it("fires at its timeout even when a garbage collection runs before it (a provider call must end at PROVIDER_TIMEOUT_MS)", async () => {
    const parent = new AbortController(); // a gRPC call's signal: alive, never aborted here
    const results: string[] = [];
    for (let i = 0; i < 3; i++) {
      const fired = outcome(timeoutSignal(200, parent.signal), 1500);
      await new Promise((r) => setTimeout(r, 20));
      gc();
      results.push(await fired);
    }
    expect(results).toEqual(Array(3).fill("TimeoutError after ≥150 ms"));
  });

  it("fires at once with the parent's reason when the parent aborts first, or had already", async () => {
    const parent = new AbortController();
    const signal = timeoutSignal(10_000, parent.signal);
    parent.abort(new DOMException("the caller's deadline passed", "AbortError"));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe("the caller's deadline passed");
    expect(timeoutSignal(10_000, parent.signal).aborted).toBe(true);
  });
});
