import v8 from "node:v8";
import vm from "node:vm";
import net from "node:net";
import { send, withTimeout } from "./http";

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

describe("withTimeout", () => {
  it("fires at its timeout even when a garbage collection runs before it (a provider call must end at PROVIDER_TIMEOUT_MS)", async () => {
    const parent = new AbortController(); // a gRPC call's signal: alive, never aborted here
    const results: string[] = [];
    for (let i = 0; i < 3; i++) {
      const fired = withTimeout(200, parent.signal, (signal) => outcome(signal, 1500));
      await new Promise((r) => setTimeout(r, 20)); // the scenario: a collection while the call is pending, its timer not yet due
      gc();
      results.push(await fired);
    }
    expect(results).toEqual(Array(3).fill("TimeoutError after ≥150 ms"));
  });

  it("fires at once with the parent's reason when the parent aborts first, or had already", async () => {
    const parent = new AbortController();
    const signal = await withTimeout(10_000, parent.signal, async (s) => {
      parent.abort(new DOMException("the caller's deadline passed", "AbortError"));
      return s;
    });
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe("the caller's deadline passed");
    expect(await withTimeout(10_000, parent.signal, async (s) => s.aborted)).toBe(true);
  });

  it("leaves nothing behind once the call settled: no timeout fires later, and the parent's abort no longer reaches it", async () => {
    const parent = new AbortController();
    const answered = await withTimeout(100, parent.signal, async (s) => s);
    const failed = await withTimeout(100, parent.signal, async (s) => Promise.reject(s)).catch((s: AbortSignal) => s);
    await new Promise((r) => setTimeout(r, 250)); // the scenario: both calls' 100 ms deadlines pass
    parent.abort();
    expect([answered.aborted, failed.aborted]).toEqual([false, false]);
  });
});

describe("send: how a failed provider call is classed", () => {
  /** A port nothing listens on (bound, then released). */
  async function closedPort(): Promise<number> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  it("is `unreachable` when no connection could be made (nothing was sent), `failed` when the connection broke after the request went out", async () => {
    const refused = await send(`http://127.0.0.1:${await closedPort()}/x`, { method: "POST", json: {}, signal: AbortSignal.timeout(2000) }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ failure: "unreachable" });

    const hangUp = net.createServer((socket) => socket.once("data", () => socket.destroy()));
    await new Promise<void>((resolve) => hangUp.listen(0, "127.0.0.1", resolve));
    try {
      const broken = await send(`http://127.0.0.1:${(hangUp.address() as net.AddressInfo).port}/x`, { method: "POST", json: {}, signal: AbortSignal.timeout(2000) }).catch((e: unknown) => e);
      expect(broken).toMatchObject({ failure: "failed" });
    } finally {
      await new Promise((resolve) => hangUp.close(resolve));
    }
  });
});
