import { allocateOnExisting, isProviderStatus, releaseAction, statusAfterCallback } from "./allocation";
import { providerUpdateOf, unusableCallback } from "./callback";
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

describe("callback → provider update", () => {
  const base = { callbackId: "c1", reference: "r1", operationId: "op", status: "completed" as const, occurredAt: new Date("2026-01-02T03:04:05Z") };

  it("rounds the amount half-even to 2 places, an operation's scale in every currency (USDT too)", () => {
    expect(providerUpdateOf({ ...base, amount: "100.5" })).toEqual({ operationId: "op", status: "completed", actualAmount: "100.50", occurredAt: "2026-01-02T03:04:05.000Z" });
    expect(providerUpdateOf({ ...base, amount: "1.500000" }).actualAmount).toBe("1.50");
    expect(providerUpdateOf({ ...base, amount: "7.125" }).actualAmount).toBe("7.12");
    expect(providerUpdateOf({ ...base, amount: "7.135" }).actualAmount).toBe("7.14");
  });

  it("leaves the amount out when the provider sent none", () => {
    expect(providerUpdateOf({ ...base, status: "declined" })).not.toHaveProperty("actualAmount", expect.anything());
  });

  it("refuses a completion whose amount is not positive at 2 places; other statuses need no amount", () => {
    for (const amount of ["0", "0.00", "0.004", "0.005"]) expect(unusableCallback({ ...base, amount })).toMatch(/positive amount/);
    for (const amount of ["0.006", "0.01", "10"]) expect(unusableCallback({ ...base, amount })).toBeUndefined();
    expect(unusableCallback({ ...base, status: "declined", amount: "0.00" })).toBeUndefined();
    expect(unusableCallback({ ...base })).toBeUndefined();
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
