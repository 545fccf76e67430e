import { Money } from "@pgw/contracts";
import fc from "fast-check";
import { randomUUID } from "node:crypto";
import { legsOf, planEvidence, splitLeg } from "./evidence";

const m = (v: string) => new Money(v);
const cents = fc.bigInt({ min: 1n, max: 10n ** 12n }).map((c) => new Money(c.toString()).div(100));

describe("legsOf", () => {
  it("defaults to the total as one leg", () => expect(legsOf(m("10.00"))!.map(String)).toEqual(["10"]));
  it("keeps legs that add up", () => expect(legsOf(m("10.00"), [m("4.50"), m("5.50")])!.map(String)).toEqual(["4.5", "5.5"]));
  it("refuses legs that do not add up", () => expect(legsOf(m("10.00"), [m("4.50"), m("5.49")])).toBeNull());
});

describe("splitLeg", () => {
  it.each([
    ["999.99", ["999.99"]],
    ["1000.00", ["500", "500"]],
    ["1500.01", ["750", "750.01"]],
  ])("%s → %j", (amount, parts) => expect(splitLeg(m(amount)).map(String)).toEqual(parts));

  it("parts add up to the leg, have at most 2 places and are positive", () => {
    fc.assert(
      fc.property(cents, (amount) => {
        const parts = splitLeg(amount);
        return parts.reduce((a, p) => a.plus(p), m("0")).eq(amount) && parts.every((p) => p.gt(0) && p.decimalPlaces() <= 2);
      }),
    );
  });
});

describe("planEvidence", () => {
  const now = new Date("2026-01-01T12:00:00Z");
  const hourAgo = new Date("2026-01-01T11:00:00Z");

  it("complete: every leg has items adding up to it, legs completed in order", () => {
    const legs = planEvidence("complete", [m("1000.00"), m("500.00")], { createdAt: hourAgo, now }, randomUUID);
    expect(legs.map((l) => [l.position, l.legacy, l.items.length])).toEqual([
      [0, false, 2],
      [1, false, 1],
    ]);
    for (const leg of legs) expect(leg.items.reduce((a, i) => a.plus(i.amount), m("0")).eq(leg.amount)).toBe(true);
    expect(legs[1].completedAt).toEqual(now);
    expect(legs[0].completedAt.getTime()).toBeLessThan(now.getTime());
  });

  it("never completes a leg before the operation was created: legs of a young operation are spaced closer", () => {
    const createdAt = new Date(now.getTime() - 10_000);
    const legs = planEvidence("complete", [m("1.00"), m("2.00"), m("3.00")], { createdAt, now }, randomUUID);
    expect(legs.map((l) => l.completedAt.getTime() - createdAt.getTime())).toEqual([0, 5000, 10_000]);
    const older = planEvidence("complete", [m("1.00"), m("2.00")], { createdAt: hourAgo, now }, randomUUID);
    expect(now.getTime() - older[0].completedAt.getTime()).toBe(60_000);
  });

  it("legacy: the first leg is a legacy contribution without items", () => {
    const legs = planEvidence("legacy", [m("100.00"), m("50.00")], { createdAt: hourAgo, now }, randomUUID);
    expect(legs.map((l) => [l.legacy, l.items.length])).toEqual([
      [true, 0],
      [false, 1],
    ]);
  });

  it("ids are unique", () => {
    const legs = planEvidence("complete", [m("1000.00"), m("2000.00")], { createdAt: hourAgo, now }, randomUUID);
    const ids = legs.flatMap((l) => [l.id, ...l.items.map((i) => i.id)]);
    expect(new Set(ids).size).toBe(6);
  });
});
