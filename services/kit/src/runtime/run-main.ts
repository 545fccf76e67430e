import { ConfigError } from "./config";

const SIGNAL_EXIT_CODES = { SIGTERM: 143, SIGINT: 130 } as const;

/**
 * Entry point of every unit: runs `start`; a bad configuration or a failed start prints one line
 * and exits non-zero; SIGTERM / SIGINT stop the unit gracefully and exit 0; a unit that only had
 * a one-off job to do (migrations) exits 0 once done.
 *
 * The signal handlers are installed before `start`: a unit still starting (waiting for its
 * database, NATS or a migration job) serves nothing yet and exits at once, with 128 + the
 * signal's number since its start did not finish. Without a handler, node running as PID 1 in a
 * container ignores SIGTERM and the pod waits out its whole grace period.
 */
export function runMain(start: () => Promise<{ stop(): Promise<void>; completed?: boolean }>): void {
  // A reader of our output that went away (a killed launcher) must not turn a write into a crash:
  // the stop that follows still has calls to finish and attempts to record.
  process.stdout.on("error", () => undefined);
  process.stderr.on("error", () => undefined);
  let unit: { stop(): Promise<void> } | undefined;
  let stopping = false;
  const onSignal = (signal: keyof typeof SIGNAL_EXIT_CODES) => {
    if (stopping) return;
    stopping = true;
    // Said on stderr, where a failed start is said too: the unit's log shows why it stopped.
    process.stderr.write(`${signal} received; ${unit ? "stopping" : "exiting before the start finished"}\n`);
    if (!unit) process.exit(SIGNAL_EXIT_CODES[signal]);
    unit.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`shutdown failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
  start().then(
    (started) => {
      if (started.completed) void started.stop().then(() => process.exit(0));
      else unit = started;
    },
    (err: unknown) => {
      const line = err instanceof ConfigError ? err.message : `startup failed: ${err instanceof Error ? err.message : String(err)}`;
      process.stderr.write(`${line}\n`);
      process.exit(1);
    },
  );
}
