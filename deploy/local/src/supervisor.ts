/**
 * When the launcher starts a unit or an embedded server again after it exited: kubelet's
 * crash-loop back-off on a shorter scale. No processes or timers here; start.ts does the wiring.
 */

export interface RestartPolicy {
  /** Wait before the first restart; each further one waits twice as long as the one before. */
  initialDelayMs: number;
  /** The wait never grows beyond this. */
  maxDelayMs: number;
  /** A run that lasted this long before it exited starts the waits over at `initialDelayMs`. */
  resetAfterMs: number;
  /** This many exits in a row before the process was ready: it is not started again. */
  maxStartFailures: number;
}

/** 1 s, 2 s, 4 s … up to 30 s; a minute up starts over; five failed starts in a row give up. */
export const RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  resetAfterMs: 60_000,
  maxStartFailures: 5,
};

/** What follows an exit: a restart after `delayMs` (the `count`th restart of this process), or giving up. */
export type AfterExit = { action: "restart"; delayMs: number; count: number } | { action: "give up"; startFailures: number };

/**
 * The restart bookkeeping of one supervised process: call `started()` when a run begins,
 * `ready()` once that run is ready, and `exited()` when it ends, which says what to do.
 */
export class RestartSchedule {
  private nextDelayMs: number;
  private startedAt = 0;
  private readyNow = false;
  private failuresInARow = 0;
  private restartCount = 0;

  constructor(
    private readonly policy: RestartPolicy = RESTART_POLICY,
    private readonly now: () => number = Date.now,
  ) {
    this.nextDelayMs = policy.initialDelayMs;
  }

  /** How often the process was restarted so far. */
  get restarts(): number {
    return this.restartCount;
  }

  /** Exits before ready in a row, up to now. */
  get startFailures(): number {
    return this.failuresInARow;
  }

  /** A run begins (the first start, or a restart). */
  started(): void {
    this.startedAt = this.now();
    this.readyNow = false;
  }

  /** The current run is ready: failed starts no longer count. */
  ready(): void {
    this.readyNow = true;
    this.failuresInARow = 0;
  }

  /** The current run ended without being asked to. */
  exited(): AfterExit {
    if (!this.readyNow) this.failuresInARow++;
    this.readyNow = false;
    if (this.failuresInARow >= this.policy.maxStartFailures) return { action: "give up", startFailures: this.failuresInARow };
    if (this.now() - this.startedAt >= this.policy.resetAfterMs) this.nextDelayMs = this.policy.initialDelayMs;
    const delayMs = this.nextDelayMs;
    this.nextDelayMs = Math.min(delayMs * 2, this.policy.maxDelayMs);
    this.restartCount++;
    return { action: "restart", delayMs, count: this.restartCount };
  }
}

/** `1 s`, `30 s`, `0.5 s`. */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * The one line said after a process ended, `what` saying how (`exited (signal SIGKILL)`):
 * `operations exited (signal SIGKILL); restarting in 1 s (restart 1)`.
 */
export function restartNotice(name: string, what: string, next: AfterExit): string {
  if (next.action === "restart") return `${name} ${what}; restarting in ${seconds(next.delayMs)} (restart ${next.count})`;
  return `${name} ${what}; it failed to start ${next.startFailures} times in a row, so it is not started again`;
}
