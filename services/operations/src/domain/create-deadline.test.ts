import { CALLER_MARGIN_MS, createDeadline } from "./create-deadline";

describe("createDeadline", () => {
  const now = 1_000_000;
  it("is the service's own deadline when the caller waits longer or says nothing", () => {
    expect(createDeadline(now, 15_000, 0)).toBe(now + 15_000);
    expect(createDeadline(now, 15_000, now + 20_000)).toBe(now + 15_000);
  });
  it("ends a margin before the caller stops waiting", () => {
    expect(createDeadline(now, 15_000, now + 10_000)).toBe(now + 10_000 - CALLER_MARGIN_MS);
  });
  it("ends a margin before the call's gRPC deadline, whichever of the caller's limits comes first", () => {
    expect(createDeadline(now, 15_000, 0, 5_000)).toBe(now + 5_000 - CALLER_MARGIN_MS);
    expect(createDeadline(now, 15_000, now + 4_000, 5_000)).toBe(now + 4_000 - CALLER_MARGIN_MS);
    expect(createDeadline(now, 15_000, 0, 60_000)).toBe(now + 15_000);
    expect(createDeadline(now, 15_000, 0, CALLER_MARGIN_MS)).toBeNull();
  });
  it("refuses to start once the caller has (nearly) stopped waiting", () => {
    expect(createDeadline(now, 15_000, now + CALLER_MARGIN_MS)).toBeNull();
    expect(createDeadline(now, 15_000, now - 5_000)).toBeNull();
  });
});
