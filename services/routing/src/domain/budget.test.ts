import fc from "fast-check";
import { Budget, budgetMs, MIN_ATTEMPT_MS } from "./budget";

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("Budget", () => {
  it("gives each attempt the provider timeout while the budget allows, then what is left", () => {
    const c = clock();
    const b = new Budget(2000, c.now);
    expect(b.attemptTimeout(800)).toBe(800);
    c.advance(800);
    expect(b.attemptTimeout(800)).toBe(800);
    c.advance(800);
    expect(b.remaining()).toBe(400);
    expect(b.attemptTimeout(800)).toBe(400);
    c.advance(400 - MIN_ATTEMPT_MS + 1);
    expect(b.attemptTimeout(800)).toBeNull();
  });

  it("gives the last candidate everything that is left, whatever its provider's timeout", () => {
    const c = clock();
    const b = new Budget(15_000, c.now);
    expect(b.attemptTimeout(5000)).toBe(5000);
    c.advance(5000);
    expect(b.attemptTimeout(5000, true)).toBe(10_000);
    c.advance(10_000 - MIN_ATTEMPT_MS + 1);
    expect(b.attemptTimeout(5000, true)).toBeNull();
  });

  it("never hands out more than is left, and the sum of full attempts stays within the budget (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20_000 }), fc.array(fc.integer({ min: 1, max: 6000 }), { maxLength: 20 }), (total, timeouts) => {
        const c = clock();
        const b = new Budget(total, c.now);
        let spent = 0;
        for (const t of timeouts) {
          const given = b.attemptTimeout(t);
          if (given === null) break;
          expect(given).toBeLessThanOrEqual(Math.min(t, b.remaining()));
          c.advance(given);
          spent += given;
        }
        expect(spent).toBeLessThanOrEqual(total);
      }),
    );
  });

  it("uses the caller's budget, or the default when none was sent", () => {
    expect(budgetMs(0, 15000)).toBe(15000);
    expect(budgetMs(-5, 15000)).toBe(15000);
    expect(budgetMs(1200, 15000)).toBe(1200);
  });
});
