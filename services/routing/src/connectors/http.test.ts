import v8 from "node:v8";
import vm from "node:vm";
import net from "node:net";
import { send, timeoutSignal } from "./http";

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
    const refused = await send(`http://127.0.0.1:${await closedPort()}/x`, { method: "POST", json: {}, signal: timeoutSignal(2000) }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ failure: "unreachable" });

    const hangUp = net.createServer((socket) => socket.once("data", () => socket.destroy()));
    await new Promise<void>((resolve) => hangUp.listen(0, "127.0.0.1", resolve));
    try {
      const broken = await send(`http://127.0.0.1:${(hangUp.address() as net.AddressInfo).port}/x`, { method: "POST", json: {}, signal: timeoutSignal(2000) }).catch((e: unknown) => e);
      expect(broken).toMatchObject({ failure: "failed" });
    } finally {
      await new Promise((resolve) => hangUp.close(resolve));
    }
  });
});
