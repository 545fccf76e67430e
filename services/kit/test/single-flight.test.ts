import { SingleFlight } from "@pgw/kit/runtime";

/** A piece of work that stays pending until released, counting its runs. */
function gatedWork<V>() {
  const gate: { runs: number; release: (v: V) => void; fail: (e: Error) => void } = { runs: 0, release: () => undefined, fail: () => undefined };
  const work = () => {
    gate.runs++;
    return new Promise<V>((resolve, reject) => {
      gate.release = resolve;
      gate.fail = reject;
    });
  };
  return { gate, work };
}

describe("SingleFlight", () => {
  it("runs the work once for concurrent requests of a key and gives each its result", async () => {
    const flights = new SingleFlight<string>();
    const { gate, work } = gatedWork<string>();
    const answers = Promise.all([flights.run("op-1", work), flights.run("op-1", work), flights.run("op-1", work)]);
    gate.release("evidence");
    expect(await answers).toEqual(["evidence", "evidence", "evidence"]);
    expect(gate.runs).toBe(1);
  });

  it("runs other keys apart, and the same key again once settled", async () => {
    const flights = new SingleFlight<number>();
    let runs = 0;
    const work = async () => ++runs;
    expect(await Promise.all([flights.run("a", work), flights.run("b", work)])).toEqual([1, 2]);
    expect(await flights.run("a", work)).toBe(3);
  });

  it("shares a failure, including a synchronous throw, and runs again after it", async () => {
    const flights = new SingleFlight<string>();
    const { gate, work } = gatedWork<string>();
    const both = Promise.allSettled([flights.run("k", work), flights.run("k", work)]);
    gate.fail(new Error("provider down"));
    expect((await both).map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(gate.runs).toBe(1);
    await expect(flights.run("k", () => { throw new Error("sync"); })).rejects.toThrow("sync");
    expect(await flights.run("k", async () => "recovered")).toBe("recovered");
  });
});
