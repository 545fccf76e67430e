import { create } from "@bufbuild/protobuf";
import { capturedOf, evidenceOfCompletion, isValidReceiptLink, legFactsOf, materialiseEvidence, Money, orderItems, presentEvidence, stableUuid, type LegFacts } from "@pgw/contracts";
import { OperationStatusChangedSchema, ProviderEvidenceSchema, type OperationStatusChanged, type ProviderEvidence } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import fc from "fast-check";

const OP = "6f1c1f4e-2a51-4c1e-9d54-1a2b3c4d5e6f";
const t = (minute: number) => new Date(Date.UTC(2026, 0, 1, 10, minute));
const m = (v: string) => new Money(v);
const captured = { amount: m("0"), completedAt: t(59) };
const leg = (legId: string, amount: string, minute: number, items: [string, string, boolean?][], legacy = false): LegFacts => ({
  legId,
  amount: m(amount),
  completedAt: t(minute),
  legacy,
  items: items.map(([id, a, hasFile]) => ({ id, amount: m(a), completedAt: t(minute), hasFile: hasFile ?? true })),
});
const view = (r: ReturnType<typeof materialiseEvidence>) => ({ status: r.status, items: r.items.map((i) => [i.legId, i.amount.toFixed(2), i.legacy, i.hasFile]) });

describe("materialiseEvidence: status rules", () => {
  it("complete: every positive leg decomposed by items adding up exactly", () => {
    const r = materialiseEvidence(OP, [leg("L1", "1200.00", 1, [["a", "600.00"], ["b", "600.00"]]), leg("L2", "300.00", 2, [["c", "300.00", false]])], captured);
    expect(view(r)).toEqual({
      status: "complete",
      items: expect.arrayContaining([
        ["L1", "600.00", false, true],
        ["L1", "600.00", false, true],
        ["L2", "300.00", false, false],
      ]),
    });
    expect(r.items).toHaveLength(3);
    expect(r.mismatches).toEqual([]);
  });

  it("partial: a legacy leg becomes one synthetic item with the leg's amount and no file", () => {
    const r = materialiseEvidence(OP, [leg("L1", "500.00", 1, [], true), leg("L2", "700.00", 2, [["c", "700.00"]])], captured);
    expect(view(r)).toEqual({ status: "partial", items: [["L1", "500.00", true, false], ["L2", "700.00", false, true]] });
    expect(r.mismatches).toEqual([]);
  });

  it.each([
    ["items short of the leg", [["a", "500.00"]]],
    ["items beyond the leg", [["a", "500.00"], ["b", "700.00"]]],
    ["no items, not legacy", []],
  ] as [string, [string, string][]][])("a mismatch (%s) shows the leg as one synthetic item, partial, and is reported", (_name, items) => {
    const r = materialiseEvidence(OP, [leg("L1", "1000.00", 1, items)], captured);
    expect(view(r)).toEqual({ status: "partial", items: [["L1", "1000.00", true, false]] });
    expect(r.mismatches).toEqual([expect.objectContaining({ legId: "L1", legAmount: "1000" })]);
  });

  it("leaves out legs of zero or negative amount", () => {
    const r = materialiseEvidence(OP, [leg("L0", "0.00", 0, []), leg("L1", "100.00", 1, [["a", "100.00"]])], captured);
    expect(view(r)).toEqual({ status: "complete", items: [["L1", "100.00", false, true]] });
  });

  it("with no positive leg, the operation's captured amount is one synthetic item", () => {
    const r = materialiseEvidence(OP, [], { amount: m("1400.00"), completedAt: t(30) });
    expect(view(r)).toEqual({ status: "partial", items: [["operation", "1400.00", true, false]] });
    expect(r.items[0].completedAt).toEqual(t(30));
  });

  it.each([
    ["an admin approved more than the legs show", "650.00", "600.00"],
    ["the provider's completion is less than its legs", "550.00", "600.00"],
  ])("legs that do not add up to the captured amount (%s): the captured amount as one synthetic item, partial, reported", (_name, capturedAmount, legsSum) => {
    const r = materialiseEvidence(OP, [leg("L1", "350.00", 1, [["a", "350.00"]]), leg("L2", "250.00", 2, [["b", "250.00"]])], { amount: m(capturedAmount), completedAt: t(30) });
    expect(view(r)).toEqual({ status: "partial", items: [["operation", capturedAmount, true, false]] });
    expect(r.mismatches).toEqual([{ legId: "operation", legAmount: m(capturedAmount).toFixed(), itemsSum: m(legsSum).toFixed() }]);
  });

  it("legs that add up to the captured amount are decomposed as they are", () => {
    const r = materialiseEvidence(OP, [leg("L1", "350.00", 1, [["a", "350.00"]]), leg("L2", "250.00", 2, [["b", "250.00"]])], { amount: m("600.000000"), completedAt: t(30) });
    expect(view(r)).toEqual({ status: "complete", items: [["L1", "350.00", false, true], ["L2", "250.00", false, true]] });
    expect(r.mismatches).toEqual([]);
  });

  it("orders items by completed_at, then id, and gives them stable UUIDs that hide the provider's ids", () => {
    const legs = [leg("L2", "300.00", 5, [["z", "100.00"], ["y", "200.00"]]), leg("L1", "100.00", 1, [["x", "100.00"]])];
    const r = materialiseEvidence(OP, legs, captured);
    expect(r.items.map((i) => i.completedAt)).toEqual([t(1), t(5), t(5)]);
    expect(r.items[1].id < r.items[2].id).toBe(true);
    expect(materialiseEvidence(OP, legs, captured).items.map((i) => i.id)).toEqual(r.items.map((i) => i.id));
    for (const i of r.items) expect(i.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(r.items.map((i) => i.providerItemId)).toEqual(["x", expect.any(String), expect.any(String)]);
  });
});

describe("materialiseEvidence: invariants", () => {
  const cents = fc.integer({ min: 1, max: 10_000_000 });
  const legArb = fc.record({
    amount: cents,
    minute: fc.integer({ min: 0, max: 59 }),
    legacy: fc.boolean(),
    split: fc.array(cents, { maxLength: 3 }),
    exact: fc.boolean(),
  });

  it("the items always add up to the positive legs, and the order is completed_at then id", () => {
    fc.assert(
      fc.property(fc.array(legArb, { minLength: 1, maxLength: 6 }), (specs) => {
        const legs = specs.map((s, n): LegFacts => {
          // exact: items that add up to the leg; otherwise whatever the provider sent.
          const parts = s.exact ? [...s.split.map((c) => Math.min(c, s.amount)), s.amount].slice(-1) : s.split;
          return leg(`L${n}`, (s.amount / 100).toFixed(2), s.minute, parts.map((c, k) => [`i${n}-${k}`, (c / 100).toFixed(2)] as [string, string]), s.legacy);
        });
        const r = materialiseEvidence(OP, legs, captured);
        const total = legs.reduce((a, l) => a.plus(l.amount), m("0"));
        const shown = r.items.reduce((a, i) => a.plus(i.amount), m("0"));
        const ordered = orderItems(r.items);
        const everyLegDecomposed = legs.every((l) => !l.legacy && l.items.length > 0 && l.items.reduce((a, i) => a.plus(i.amount), m("0")).eq(l.amount));
        return shown.eq(total) && ordered.every((x, k) => x === r.items[k]) && (r.status === "complete") === everyLegDecomposed;
      }),
    );
  });
});

describe("helpers", () => {
  it("stableUuid differs per input and is deterministic, a version 5 UUID", () => {
    expect(stableUuid("a", "b")).toBe(stableUuid("a", "b"));
    expect(stableUuid("a", "b")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(stableUuid("a", "b")).not.toBe(stableUuid("ab"));
  });
});

describe("a completion's evidence from the legs its status event carries", () => {
  const wireLeg = { legId: "L1", amount: "1500.00", completedAt: t(1).toISOString(), legacy: false, items: [{ id: "a", amount: "1500.00", completedAt: t(1).toISOString(), hasFile: true }] };
  const event = (over: { status?: string; providerEvidence?: ProviderEvidence } = {}) =>
    create(OperationStatusChangedSchema, {
      operationId: OP,
      status: "completed",
      operation: { operationId: OP, status: "completed", actualAmount: "1500.00", currency: "RUB", updatedAt: t(30).toISOString() },
      occurredAt: t(31).toISOString(),
      ...over,
    });

  it("is unknown (null) when the event carries no legs, or is no completion", () => {
    expect(evidenceOfCompletion(OP, event())).toBeNull();
    expect(evidenceOfCompletion(OP, event({ status: "declined", providerEvidence: create(ProviderEvidenceSchema, { legs: [wireLeg] }) }))).toBeNull();
  });

  it("is the rule applied to the carried legs, parsed as routing's answer is", () => {
    const legs = [wireLeg];
    expect(evidenceOfCompletion(OP, event({ providerEvidence: create(ProviderEvidenceSchema, { legs }) }))).toEqual(materialiseEvidence(OP, legFactsOf(legs), capturedOf({ actualAmount: "1500.00", updatedAt: "" }, t(30))));
  });

  it("with legs known to be none, is the captured amount at the operation's last change (the event's time when it has none)", () => {
    const none = create(ProviderEvidenceSchema, { legs: [] });
    const at = (e: OperationStatusChanged) => evidenceOfCompletion(OP, e)!.items.map((i) => [i.amount.toFixed(2), i.completedAt]);
    expect(at(event({ providerEvidence: none }))).toEqual([["1500.00", t(30)]]);
    const undated = event({ providerEvidence: none });
    undated.operation!.updatedAt = "";
    expect(at(undated)).toEqual([["1500.00", t(31)]]);
  });
});

describe("presentEvidence", () => {
  const links = { baseUrl: "https://pay.example.com/", secret: "test-secret" };
  const now = t(0);
  it("writes amounts exactly, times in ISO, and a link valid 15 minutes only for an item with a file", () => {
    const items = [
      { id: stableUuid("x"), amount: m("600"), completedAt: t(1), hasFile: true },
      { id: stableUuid("y"), amount: m("7.125"), completedAt: t(2), hasFile: false },
    ];
    const shown = presentEvidence("partial", items, links, now);
    expect(shown.status).toBe("partial");
    expect(shown.items.map(({ receiptUrl: _, ...i }) => i)).toEqual([
      { id: items[0].id, amount: "600.00", completedAt: t(1).toISOString() },
      { id: items[1].id, amount: "7.125", completedAt: t(2).toISOString() },
    ]);
    expect(shown.items[1].receiptUrl).toBeUndefined();
    const url = new URL(shown.items[0].receiptUrl!);
    expect(`${url.origin}${url.pathname}`).toBe(`https://pay.example.com/v1/receipts/${items[0].id}/file`);
    expect(isValidReceiptLink(links.secret, items[0].id, shown.items[0].receiptUrl!, now)).toBe(true);
  });
});
