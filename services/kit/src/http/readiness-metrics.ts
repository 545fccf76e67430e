import { Gauge, type Registry } from "prom-client";
import { failingChecks, type ProbeState } from "./health-http";

/**
 * `unit_ready`: 1 when the unit's readiness checks pass (what /readyz answers 204 to), 0 otherwise,
 * evaluated at each scrape; with `unit_readiness_check_failing{check}` naming the checks that fail
 * (the unit's fixed set of check names, plus `shutting_down`).
 */
export function registerReadiness(registry: Registry, state: ProbeState): void {
  let evaluation: Promise<string[]> | undefined;
  // One evaluation serves both gauges of a scrape.
  const failing = () => (evaluation ??= failingChecks(state).finally(() => (evaluation = undefined)));
  new Gauge({
    name: "unit_ready",
    help: "1 when the unit's readiness checks pass (/readyz answers 204), else 0",
    registers: [registry],
    async collect() {
      this.set((await failing()).length === 0 ? 1 : 0);
    },
  });
  new Gauge({
    name: "unit_readiness_check_failing",
    help: "1 for each readiness check that fails, by check",
    labelNames: ["check"],
    registers: [registry],
    async collect() {
      const now = new Set(await failing());
      this.reset();
      for (const check of [...Object.keys(state.checks), ...now]) this.set({ check }, now.has(check) ? 1 : 0);
    },
  });
}
