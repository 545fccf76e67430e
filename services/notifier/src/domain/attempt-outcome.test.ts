import { decideAfterAttempt } from "./attempt-outcome";

const schedule = [0, 100, 1000];

describe("what an attempt means for the delivery", () => {
  it.each([
    [200, 1, { kind: "delivered" }],
    [204, 3, { kind: "delivered" }],
    [299, 1, { kind: "delivered" }],
    [410, 1, { kind: "disabled" }],
    [500, 1, { kind: "retry", delayMs: 100 }],
    [301, 1, { kind: "retry", delayMs: 100 }],
    [404, 2, { kind: "retry", delayMs: 1000 }],
    [undefined, 2, { kind: "retry", delayMs: 1000 }],
    [500, 3, { kind: "failed" }],
    [undefined, 3, { kind: "failed" }],
  ] as const)("status %s on attempt %i of the round → %j", (status, n, expected) => {
    expect(decideAfterAttempt(status, n, schedule, 0.5)).toEqual(expected);
  });
});
