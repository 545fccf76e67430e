import { RESTART_POLICY, RestartSchedule, restartNotice, seconds, type AfterExit } from "../src/supervisor";

/** A schedule on a clock the test moves. */
function schedule() {
  let now = 1_000_000;
  const restarts = new RestartSchedule(RESTART_POLICY, () => now);
  return {
    restarts,
    /** A run that is ready, lasts `ms` and exits: what follows. */
    runReady(ms: number): AfterExit {
      restarts.started();
      restarts.ready();
      now += ms;
      return restarts.exited();
    },
    /** A run that exits after `ms` without having been ready. */
    runUnready(ms: number): AfterExit {
      restarts.started();
      now += ms;
      return restarts.exited();
    },
    /** The back-off passes. */
    wait(ms: number) {
      now += ms;
    },
  };
}

const delays = (afters: AfterExit[]) => afters.map((next) => (next.action === "restart" ? next.delayMs : "give up"));

describe("RestartSchedule", () => {
  it("waits 1 s before the first restart, doubling up to 30 s, counting every restart", () => {
    const s = schedule();
    const afters: AfterExit[] = [];
    for (let i = 0; i < 8; i++) {
      const next = s.runReady(5_000);
      afters.push(next);
      if (next.action === "restart") s.wait(next.delayMs);
    }
    expect(delays(afters)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    expect(afters.map((next) => (next.action === "restart" ? next.count : 0))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(s.restarts.restarts).toBe(8);
  });

  it("starts the waits over after a run that stayed up a minute; the restart count goes on", () => {
    const s = schedule();
    expect(delays([s.runReady(1_000), s.runReady(1_000), s.runReady(1_000)])).toEqual([1_000, 2_000, 4_000]);
    expect(s.runReady(59_999)).toEqual({ action: "restart", delayMs: 8_000, count: 4 });
    expect(s.runReady(60_000)).toEqual({ action: "restart", delayMs: 1_000, count: 5 });
    expect(s.runReady(1_000)).toEqual({ action: "restart", delayMs: 2_000, count: 6 });
  });

  it("gives up after five exits in a row before ready", () => {
    const s = schedule();
    const afters = [1, 2, 3, 4, 5].map(() => s.runUnready(500));
    expect(delays(afters)).toEqual([1_000, 2_000, 4_000, 8_000, "give up"]);
    expect(afters[4]).toEqual({ action: "give up", startFailures: 5 });
  });

  it("counts failed starts in a row only: a ready run clears them", () => {
    const s = schedule();
    for (let i = 0; i < 4; i++) expect(s.runUnready(500).action).toBe("restart");
    expect(s.restarts.startFailures).toBe(4);
    // ready, then exits a little later: a restart, and the count starts again
    expect(s.runReady(2_000).action).toBe("restart");
    expect(s.restarts.startFailures).toBe(0);
    for (let i = 0; i < 4; i++) expect(s.runUnready(500).action).toBe("restart");
    expect(s.runUnready(500)).toEqual({ action: "give up", startFailures: 5 });
  });

  it("starts the waits over after a long run that was never ready, and counts it as a failed start", () => {
    const s = schedule();
    expect(s.runReady(1_000)).toMatchObject({ delayMs: 1_000 });
    // up for two minutes but never ready: a failed start, and the waits start over (it stayed up)
    expect(s.runUnready(120_000)).toMatchObject({ action: "restart", delayMs: 1_000 });
    expect(s.restarts.startFailures).toBe(1);
  });
});

describe("restartNotice", () => {
  it("says in one line what happened and what follows", () => {
    expect(restartNotice("operations", "exited (signal SIGKILL)", { action: "restart", delayMs: 1_000, count: 1 })).toBe(
      "operations exited (signal SIGKILL); restarting in 1 s (restart 1)",
    );
    expect(restartNotice("nats-server", "exited (exit code 1)", { action: "restart", delayMs: 30_000, count: 7 })).toBe(
      "nats-server exited (exit code 1); restarting in 30 s (restart 7)",
    );
    expect(restartNotice("ledger", "exited (exit code 1)", { action: "give up", startFailures: 5 })).toBe(
      "ledger exited (exit code 1); it failed to start 5 times in a row, so it is not started again",
    );
  });

  it("writes seconds without needless decimals", () => {
    expect([seconds(1_000), seconds(500), seconds(30_000)]).toEqual(["1 s", "0.5 s", "30 s"]);
  });
});
