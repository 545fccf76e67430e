import { ConfigError } from "./config";

/**
 * Entry point of every unit: runs `start`; a bad configuration or a failed start prints one line
 * and exits non-zero; SIGTERM / SIGINT stop the unit gracefully and exit 0; a unit that only had
 * a one-off job to do (migrations) exits 0 once done.
 */
export function runMain(start: () => Promise<{ stop(): Promise<void>; completed?: boolean }>): void {
  start().then(
    (unit) => {
      if (unit.completed) {
        void unit.stop().then(() => process.exit(0));
        return;
      }
      let stopping = false;
      const shutdown = () => {
        if (stopping) return;
        stopping = true;
        unit.stop().then(
          () => process.exit(0),
          (err: unknown) => {
            process.stderr.write(`shutdown failed: ${String(err)}\n`);
            process.exit(1);
          },
        );
      };
      process.on("SIGTERM", shutdown);
      process.on("SIGINT", shutdown);
    },
    (err: unknown) => {
      const line = err instanceof ConfigError ? err.message : `startup failed: ${err instanceof Error ? err.message : String(err)}`;
      process.stderr.write(`${line}\n`);
      process.exit(1);
    },
  );
}
