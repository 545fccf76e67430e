import type { Logger } from "./logger";

// How often a step still running is reported.
const REPORT_EVERY_MS = 5000;

/**
 * Runs a unit's shutdown steps one after another. A step still running after 5 s is logged (and
 * again every 5 s) by name, so a shutdown that outlasts the pod's grace period says where it stuck.
 */
export async function runShutdownSteps(log: Logger, steps: readonly (readonly [name: string, step: () => Promise<unknown>])[]): Promise<void> {
  for (const [name, step] of steps) {
    const startedAt = Date.now();
    const report = setInterval(() => log.warn({ step: name, elapsedMs: Date.now() - startedAt }, "shutdown: step still running"), REPORT_EVERY_MS);
    report.unref();
    try {
      await step();
    } finally {
      clearInterval(report);
    }
  }
}
