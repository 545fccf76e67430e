import { SharedReads } from "./shared-reads";

/** A read whose answers the test releases by hand; `version` is what the "database" holds. */
function harness() {
  let version = 0;
  const started: { key: string; resolve: () => void; reject: (e: Error) => void }[] = [];
  const reads = new SharedReads((key) => {
    const seen = version;
    return new Promise<string>((resolve, reject) => started.push({ key, resolve: () => resolve(`${key}@${seen}`), reject }));
  });
  const tick = () => new Promise((r) => setImmediate(r));
  return { reads, started, tick, write: () => version++ };
}

describe("shared reads", () => {
  it("shares a read among callers that arrive before it starts", async () => {
    const h = harness();
    const a = h.reads.get("s");
    const b = h.reads.get("s");
    await h.tick();
    expect(h.started).toHaveLength(1);
    h.started[0].resolve();
    expect(await Promise.all([a, b])).toEqual(["s@0", "s@0"]);
  });

  it("never answers a caller with a read that started before it arrived", async () => {
    const h = harness();
    const first = h.reads.get("s");
    await h.tick();
    h.write(); // committed after the first read took its snapshot, before the next callers ask
    const second = h.reads.get("s");
    const third = h.reads.get("s");
    await h.tick();
    expect(h.started).toHaveLength(1); // the next read waits for the running one
    h.started[0].resolve();
    expect(await first).toBe("s@0");
    await h.tick();
    expect(h.started).toHaveLength(2);
    h.started[1].resolve();
    expect(await Promise.all([second, third])).toEqual(["s@1", "s@1"]);
  });

  it("keeps keys apart and recovers from a failed read", async () => {
    const h = harness();
    const failing = h.reads.get("s");
    const other = h.reads.get("t");
    await h.tick();
    expect(h.started.map((s) => s.key)).toEqual(["s", "t"]);
    h.started[0].reject(new Error("db down"));
    h.started[1].resolve();
    await expect(failing).rejects.toThrow("db down");
    expect(await other).toBe("t@0");
    const again = h.reads.get("s");
    await h.tick();
    h.started[2].resolve();
    expect(await again).toBe("s@0");
  });
});
