import { Money } from "@pgw/contracts";
import fc from "fast-check";
import { needsConversion, permanentRefusal, routeMatches, selectCandidates, type RouteAsk, type RouteFacts } from "./candidates";

const route = (over: Partial<RouteFacts> & { id: string }): RouteFacts => ({
  type: "payment",
  method: "WT_RUB_C2C",
  currency: "RUB",
  settlementCurrency: "RUB",
  priority: 100,
  minAmount: new Money("1.00"),
  maxAmount: new Money("1000.00"),
  autoConversion: false,
  enabled: true,
  providerEnabled: true,
  ...over,
});

const ask = (over: Partial<RouteAsk> = {}): RouteAsk => ({
  type: "payment",
  method: "WT_RUB_C2C",
  amount: new Money("100.00"),
  currency: "RUB",
  settlementCurrency: "RUB",
  ...over,
});

describe("routeMatches", () => {
  it.each<[string, Partial<RouteFacts>, Partial<RouteAsk>, boolean]>([
    ["same pair, within limits", {}, {}, true],
    ["route disabled", { enabled: false }, {}, false],
    ["provider disabled", { providerEnabled: false }, {}, false],
    ["other type", { type: "payout" }, {}, false],
    ["other method", { method: "WT_RUB_PHONE" }, {}, false],
    ["other currency", { currency: "USDT" }, {}, false],
    ["amount at min", {}, { amount: new Money("1.00") }, true],
    ["amount below min", {}, { amount: new Money("0.99") }, false],
    ["amount at max", {}, { amount: new Money("1000.00") }, true],
    ["amount above max", {}, { amount: new Money("1000.01") }, false],
    ["conversion pair without auto_conversion", { settlementCurrency: "USDT" }, { settlementCurrency: "USDT" }, false],
    ["conversion pair with auto_conversion", { settlementCurrency: "USDT", autoConversion: true }, { settlementCurrency: "USDT" }, true],
    ["conversion route does not serve the other settlement currency", { settlementCurrency: "USDT", autoConversion: true }, {}, false],
  ])("%s", (_name, r, a, expected) => {
    expect(routeMatches(route({ id: "r", ...r }), ask(a))).toBe(expected);
  });

  it("needs conversion only when the currencies differ", () => {
    expect(needsConversion({ currency: "RUB", settlementCurrency: "RUB" })).toBe(false);
    expect(needsConversion({ currency: "RUB", settlementCurrency: "USDT" })).toBe(true);
  });
});

describe("selectCandidates", () => {
  it("orders by priority, then id, and drops what does not match", () => {
    const routes = [
      route({ id: "c", priority: 200 }),
      route({ id: "b", priority: 100 }),
      route({ id: "x", priority: 1, enabled: false }),
      route({ id: "a", priority: 100 }),
      route({ id: "y", priority: 1, maxAmount: new Money("50.00") }),
    ];
    expect(selectCandidates(routes, ask()).map((r) => r.id)).toEqual(["a", "b", "c"]);
  });

  it("keeps only matching routes, sorted, whatever the input (property)", () => {
    const arb = fc.array(
      fc.record({
        id: fc.uuid(),
        priority: fc.integer({ min: 0, max: 5 }),
        enabled: fc.boolean(),
        max: fc.integer({ min: 1, max: 300 }),
      }),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(arb, fc.integer({ min: 1, max: 300 }), (rows, amount) => {
        const routes = rows.map((r) => route({ id: r.id, priority: r.priority, enabled: r.enabled, maxAmount: new Money(r.max) }));
        const a = ask({ amount: new Money(amount) });
        const out = selectCandidates(routes, a);
        expect(out.length).toBe(routes.filter((r) => routeMatches(r, a)).length);
        for (let i = 1; i < out.length; i++) {
          const [p, q] = [out[i - 1], out[i]];
          expect(p.priority < q.priority || (p.priority === q.priority && p.id <= q.id)).toBe(true);
        }
      }),
    );
  });
});

describe("permanentRefusal", () => {
  const RANGE = "must be between 1.00 and 1000.00 for this method and currency";
  it.each<[string, Partial<RouteFacts>[], Partial<RouteAsk>, ReturnType<typeof permanentRefusal>]>([
    ["a route carries it", [{}], {}, null],
    ["a route carries it beside one that does not", [{ maxAmount: new Money("50.00") }, {}], {}, null],
    ["no route at all", [], {}, { field: "method", issue: "is not available for payments" }],
    ["the method's only route is switched off: temporary", [{ enabled: false }], {}, null],
    ["the method's only provider is switched off: temporary", [{ providerEnabled: false }], {}, null],
    ["the method is routed for payouts only", [{ type: "payout" }], {}, { field: "method", issue: "is not available for payments" }],
    ["the method's only route admits no amount", [{ minAmount: new Money("10.00"), maxAmount: new Money("5.00") }], {}, { field: "method", issue: "is not available for payments" }],
    ["the method is routed in another currency", [{ currency: "USDT", settlementCurrency: "USDT" }], {}, { field: "currency", issue: "is not available for WT_RUB_C2C payments of a shop settling in RUB" }],
    ["its currency's route is switched off, another's is not: temporary", [{ currency: "USDT", settlementCurrency: "USDT" }, { enabled: false }], {}, null],
    [
      "no route converts into the shop's currency",
      [{}, { settlementCurrency: "USDT", autoConversion: false }],
      { settlementCurrency: "USDT" },
      { field: "currency", issue: "is not available for WT_RUB_C2C payments of a shop settling in USDT" },
    ],
    ["below the only route's minimum", [{}], { amount: new Money("0.99") }, { field: "amount", issue: RANGE }],
    ["above the only route's maximum", [{}], { amount: new Money("1000.01") }, { field: "amount", issue: RANGE }],
    ["overlapping and adjacent limits join", [{ maxAmount: new Money("500.00") }, { minAmount: new Money("400.00"), maxAmount: new Money("999.99") }, { minAmount: new Money("1000.00") }], { amount: new Money("0.50") }, { field: "amount", issue: RANGE }],
    [
      "disjoint limits are each named, lowest first",
      [{ minAmount: new Money("500.00") }, { minAmount: new Money("0.00"), maxAmount: new Money("100.00") }],
      { amount: new Money("200.00") },
      { field: "amount", issue: "must be between 0.01 and 100.00 or between 500.00 and 1000.00 for this method and currency" },
    ],
    ["a switched-off route that takes the amount makes it temporary", [{}, { enabled: false, maxAmount: new Money("5000.00") }], { amount: new Money("2000.00") }, null],
  ])("%s", (_name, routes, a, expected) => {
    expect(permanentRefusal(routes.map((r, i) => route({ id: String(i), ...r })), ask(a))).toEqual(expected);
  });

  it("refuses exactly when no route would match were every route in service (property)", () => {
    const arb = fc.array(fc.record({ enabled: fc.boolean(), currency: fc.constantFrom("RUB", "USDT"), min: fc.integer({ min: 0, max: 300 }), max: fc.integer({ min: 0, max: 300 }) }), { maxLength: 10 });
    fc.assert(
      fc.property(arb, fc.integer({ min: 1, max: 300 }), (rows, amount) => {
        const routes = rows.map((r, i) => route({ id: String(i), enabled: r.enabled, currency: r.currency, minAmount: new Money(r.min), maxAmount: new Money(r.max) }));
        const a = ask({ amount: new Money(amount) });
        const inService = routes.map((r) => ({ ...r, enabled: true }));
        expect(permanentRefusal(routes, a) === null).toBe(selectCandidates(inService, a).length > 0);
      }),
    );
  });
});
