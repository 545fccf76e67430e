/** The benchmark's verdicts: a row meets its target only at the offered rate, within latency and CPU. */
import { TARGETS, verdict, verdictTable } from "../scripts/bench/targets";

const create = TARGETS.create;

test("a row that kept up, within p99 and CPU, meets its target", () => {
  expect(verdict(create, { perSecond: 150, p99: 80, cpuMs: 3.9, failed: 0 })).toEqual({ met: true, reasons: [] });
});

test("every shortfall is named: rate, failures, p99 and CPU", () => {
  const { met, reasons } = verdict(create, { perSecond: 120, p99: 140, cpuMs: 6.89, failed: 3 });
  expect(met).toBe(false);
  expect(reasons).toEqual(["120/s answered of 150/s offered", "3 failed", "p99 140 ms > 100", "CPU 6.89 ms > 4"]);
});

test("a CPU target is missed when CPU was not measured; a latency-only target ignores CPU", () => {
  expect(verdict(create, { perSecond: 150, p99: 50, failed: 0 }).reasons).toEqual(["CPU not measured"]);
  expect(verdict(TARGETS.completionSlow, { perSecond: 20, p99: 120, cpuMs: 30, failed: 0 }).met).toBe(true);
});

test("the table shows each target with what was measured", () => {
  const table = verdictTable([{ target: TARGETS.completed, measured: { perSecond: 1000, p99: 3, cpuMs: 0.25, failed: 0 } }]);
  expect(table.split("\n")[2]).toBe("| get_operation_state, completed | 1000/s | 3 (≤ 10) | 0.25 (≤ 0.4) | met |");
});
