import { nextRetryDelayMs, parseRetrySchedule, retryHorizonMs, STANDARD_RETRY_SCHEDULE_MS } from "./retry-schedule";

describe("retry schedule", () => {
  it("is the Standard Webhooks schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (about 3 days)", () => {
    const h = 3_600_000;
    expect(STANDARD_RETRY_SCHEDULE_MS).toEqual([0, 5000, 300_000, 1_800_000, 2 * h, 5 * h, 10 * h, 14 * h, 20 * h, 24 * h]);
    const days = retryHorizonMs(STANDARD_RETRY_SCHEDULE_MS) / (24 * h);
    expect(days).toBeGreaterThan(3);
    expect(days).toBeLessThan(3.3);
  });

  it.each([
    // attempts done, random, expected delay
    [1, 0.5, 5000],
    [1, 0, 4500],
    [1, 0.999999, 5500],
    [2, 0.5, 300_000],
    [9, 0.5, 86_400_000],
  ])("after %i failed attempts (random %f) waits %i ms", (done, random, expected) => {
    expect(nextRetryDelayMs(STANDARD_RETRY_SCHEDULE_MS, done, random)).toBe(expected);
  });

  it("gives up after the last attempt of the schedule", () => {
    expect(nextRetryDelayMs(STANDARD_RETRY_SCHEDULE_MS, 10, 0.5)).toBeNull();
    expect(nextRetryDelayMs([0, 50], 2, 0.5)).toBeNull();
    expect(nextRetryDelayMs([0, 50], 1, 0.5)).toBe(50);
  });

  it("parses a configured schedule and refuses anything else", () => {
    expect(parseRetrySchedule("0, 50,200")).toEqual([0, 50, 200]);
    for (const bad of ["", "1,,2", "-1", "1.5", "abc", "5s"]) expect(() => parseRetrySchedule(bad)).toThrow();
  });
});
