import { attemptStruggled, shopSlotCap, STRUGGLING_SHOP_CONCURRENCY } from "./shop-slots";

describe("shopSlotCap", () => {
  it("gives a struggling shop only a couple of slots, never more than the configured cap", () => {
    expect(shopSlotCap(16, false)).toBe(16);
    expect(shopSlotCap(16, true)).toBe(STRUGGLING_SHOP_CONCURRENCY);
    expect(shopSlotCap(1, true)).toBe(1);
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
