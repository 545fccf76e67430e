import perfHooks from "node:perf_hooks";
import { EVENT_LOOP_SAMPLE_MS, unitMetricsRegistry } from "@pgw/kit/runtime";

describe("unitMetricsRegistry", () => {
  afterEach(() => jest.restoreAllMocks());

  it("holds Node's default metrics, event loop lag included", async () => {
    const text = await unitMetricsRegistry().metrics();
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
  });

  it("samples the event loop every EVENT_LOOP_SAMPLE_MS, not prom-client's 10 ms", () => {
    const monitor = jest.spyOn(perfHooks, "monitorEventLoopDelay");
    unitMetricsRegistry();
    expect(monitor).toHaveBeenCalledWith({ resolution: EVENT_LOOP_SAMPLE_MS });
    expect(EVENT_LOOP_SAMPLE_MS).toBeGreaterThan(10);
  });
});
