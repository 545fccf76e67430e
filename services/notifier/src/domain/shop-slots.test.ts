import { attemptStruggled, shopsWithFewerSlots, shopSlotCap, STRUGGLING_SHOP_CONCURRENCY } from "./shop-slots";

describe("shopSlotCap", () => {
  it("gives a struggling shop only a couple of slots, never more than the configured cap", () => {
    expect(shopSlotCap(16, false)).toBe(16);
    expect(shopSlotCap(16, true)).toBe(STRUGGLING_SHOP_CONCURRENCY);
    expect(shopSlotCap(1, true)).toBe(1);
  });
});

describe("shopsWithFewerSlots", () => {
  it("lists the shops with attempts in flight or a struggling endpoint with the slots they have left, none below zero", () => {
    const inFlight = new Map([
      ["busy", 16],
      ["some", 5],
      ["struggling, in flight", 1],
      ["struggling, over its cap", 9],
    ]);
    const struggling = new Set(["struggling, in flight", "struggling, over its cap", "struggling, idle"]);
    expect(Object.fromEntries(shopsWithFewerSlots(16, inFlight, struggling))).toEqual({
      busy: 0,
      some: 11,
      "struggling, in flight": STRUGGLING_SHOP_CONCURRENCY - 1,
      "struggling, over its cap": 0,
      "struggling, idle": STRUGGLING_SHOP_CONCURRENCY,
    });
    expect(shopsWithFewerSlots(16, new Map(), new Set()).size).toBe(0);
  });
});

describe("attemptStruggled", () => {
  it("is true for no answer and for an answer after half the timeout, false for a prompt answer of any status", () => {
    expect(attemptStruggled(undefined, 10, 10_000)).toBe(true);
    expect(attemptStruggled(204, 5_000, 10_000)).toBe(true);
    expect(attemptStruggled(204, 4_999, 10_000)).toBe(false);
    expect(attemptStruggled(500, 30, 10_000)).toBe(false);
  });
});
