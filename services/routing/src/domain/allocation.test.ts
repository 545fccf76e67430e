import { allocateOnExisting, isProviderStatus, releaseAction, statusAfterCallback } from "./allocation";
import { bookableAmount } from "./callback";
import { defaultRoutes } from "./default-routes";

describe("allocation lifecycle", () => {
  it.each([
    [undefined, "tombstone"],
    ["active", "release"],
    ["released", "already_released"],
    ["completed", "terminal"],
    ["declined", "terminal"],
    ["expired", "terminal"],
  ] as const)("release of %s → %s", (status, action) => {
    expect(releaseAction(status)).toBe(action);
  });

  it.each([
    ["released", "cancelled"],
    ["active", "answer"],
    ["completed", "answer"],
  ] as const)("allocate finding %s → %s", (status, decision) => {
    expect(allocateOnExisting(status)).toBe(decision);
  });

  it.each([
    ["active", "completed", "completed"],
    ["released", "completed", "completed"],
    ["completed", "expired", "completed"],
    ["declined", "completed", "declined"],
  ] as const)("callback on %s reporting %s → %s", (current, reported, after) => {
    expect(statusAfterCallback(current, reported)).toBe(after);
  });

  it("knows the provider statuses", () => {
    expect(isProviderStatus("completed")).toBe(true);
    expect(isProviderStatus("paid")).toBe(false);
  });
});

describe("the amount a provider report books", () => {
  it("keeps a completion's amount at its currency's scale, never rounding it", () => {
    expect(bookableAmount("completed", "100.5", "RUB")).toBe("100.50");
    expect(bookableAmount("completed", "1.500000", "RUB")).toBe("1.50");
    expect(bookableAmount("completed", "7.125", "USDT")).toBe("7.125000");
  });

  it("refuses a completion without an amount, with nothing positive, or with more places than its currency holds", () => {
    for (const amount of [undefined, "0", "0.00", "7.125", "0.004"]) expect(bookableAmount("completed", amount, "RUB")).toBeNull();
    expect(bookableAmount("completed", "7.1234567", "USDT")).toBeNull();
  });

  it("books nothing for other statuses, whatever they carry", () => {
    expect(bookableAmount("declined", "0.00", "RUB")).toBeUndefined();
    expect(bookableAmount("expired", undefined, "RUB")).toBeUndefined();
  });
});

describe("default seed", () => {
  it("covers both types × both methods × four currency pairs, converting exactly when currencies differ", () => {
    const routes = defaultRoutes();
    expect(routes).toHaveLength(16);
    expect(new Set(routes.map((r) => `${r.type}/${r.method}/${r.currency}/${r.settlementCurrency}`)).size).toBe(16);
    for (const r of routes) expect(r.autoConversion).toBe(r.currency !== r.settlementCurrency);
    expect(routes.filter((r) => r.currency === "RUB" && r.settlementCurrency === "USDT")).toHaveLength(4);
  });
});
