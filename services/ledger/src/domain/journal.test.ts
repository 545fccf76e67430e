import { Money } from "@pgw/contracts";
import { adjustmentPostings, paymentCompletedPostings, payoutCompletedPostings, releasePostings, reservePostings, type Capture } from "./flows";
import { checkEntry, fingerprint, JournalRuleViolation, runningBalances, shopAccount, sumsByCurrency, systemAccount, type EntryDraft, type Posting } from "./journal";

const SHOP = "7a1d2a43-0b8e-4d4c-9d3b-3f3b1a7c5e01";
const m = (v: string) => new Money(v);
const draft = (postings: Posting[]): EntryDraft => ({ source: "s", kind: "adjustment", shopId: SHOP, reason: "r", actor: "a", postings });
const sums = (postings: Posting[]) => Object.fromEntries([...sumsByCurrency(postings)].map(([c, s]) => [c, s.toFixed()]));
const amounts = (postings: Posting[]) => postings.map((p) => `${p.account.kind}:${p.account.currency}:${p.amount.toFixed()}`);

const plain: Capture = { shopId: SHOP, currency: "RUB", actual: m("1000"), settlementCurrency: "RUB", recorded: m("1000"), commission: m("25"), settlement: m("975") };
const converted: Capture = { shopId: SHOP, currency: "RUB", actual: m("1000"), settlementCurrency: "USDT", recorded: m("10.869565"), commission: m("0.271739"), settlement: m("10.597826") };
const payout: Capture = { ...plain, commission: m("15"), settlement: m("1015") };
const convertedPayout: Capture = { ...converted, commission: m("0.163043"), settlement: m("11.032608") };

describe("journal entries", () => {
  it.each([
    ["reserve", reservePostings(SHOP, "RUB", m("101.5"))],
    ["release", releasePostings(SHOP, "USDT", m("0.000001"))],
    ["payment", paymentCompletedPostings(plain)],
    ["payment with conversion", paymentCompletedPostings(converted)],
    ["payout", payoutCompletedPostings(payout, m("1015"))],
    ["partial payout", payoutCompletedPostings(payout, m("2030"))],
    ["payout without reserve", payoutCompletedPostings(payout, m("0"))],
    ["payout with conversion", payoutCompletedPostings(convertedPayout, m("11.032608"))],
    ["credit", adjustmentPostings(SHOP, "RUB", m("10.01"))],
    ["debit", adjustmentPostings(SHOP, "USDT", m("-3.000001"))],
  ])("%s sums to zero per currency", (_, postings) => {
    for (const sum of sumsByCurrency(postings).values()) expect(sum.toFixed()).toBe("0");
    expect(() => checkEntry(draft(postings))).not.toThrow();
  });

  it("posts a payment as clearing → available + commission", () => {
    expect(amounts(paymentCompletedPostings(plain))).toEqual(["provider_clearing:RUB:-1000", "available:RUB:975", "commission_revenue:RUB:25"]);
  });

  it("records a converted payment through fx_conversion in both currencies", () => {
    const postings = paymentCompletedPostings(converted);
    expect(amounts(postings)).toEqual([
      "provider_clearing:RUB:-1000",
      "fx_conversion:RUB:1000",
      "fx_conversion:USDT:-10.869565",
      "available:USDT:10.597826",
      "commission_revenue:USDT:0.271739",
    ]);
    expect(sums(postings)).toEqual({ RUB: "0", USDT: "0" });
  });

  it("consumes the whole reserve of a partial payout and returns the rest to available", () => {
    expect(amounts(payoutCompletedPostings(payout, m("2030")))).toEqual([
      "reserved:RUB:-2030",
      "available:RUB:1015",
      "commission_revenue:RUB:15",
      "provider_clearing:RUB:1000",
    ]);
  });

  it("refuses unbalanced entries, amounts beyond the currency scale and entries that move nothing", () => {
    const unbalanced = [
      { account: shopAccount(SHOP, "available", "RUB"), amount: m("1") },
      { account: systemAccount("manual_adjustments", "RUB"), amount: m("-0.99") },
    ];
    expect(() => checkEntry(draft(unbalanced))).toThrow(JournalRuleViolation);
    // balanced in total but not per currency
    const crossCurrency = [
      { account: shopAccount(SHOP, "available", "RUB"), amount: m("1") },
      { account: systemAccount("manual_adjustments", "USDT"), amount: m("-1") },
    ];
    expect(() => checkEntry(draft(crossCurrency))).toThrow(/not zero/);
    expect(() => checkEntry(draft(adjustmentPostings(SHOP, "RUB", m("0.001"))))).toThrow(/scale/);
    expect(() => checkEntry(draft(adjustmentPostings(SHOP, "RUB", m("0"))))).toThrow(/move money/);
  });

  it("carries each posting's running balance and every account's final one", () => {
    const available = shopAccount(SHOP, "available", "RUB");
    const before = new Map([[`${SHOP}|available|RUB`, m("10")]]);
    const postings = [
      { account: available, amount: m("-3") },
      { account: systemAccount("manual_adjustments", "RUB"), amount: m("5") },
      { account: available, amount: m("-2") },
    ];
    const { after, final } = runningBalances(before, postings);
    expect(after.map((a) => a.toFixed())).toEqual(["7", "5", "5"]);
    expect(Object.fromEntries([...final].map(([k, v]) => [k.split("|")[1], v.toFixed()]))).toEqual({ available: "5", manual_adjustments: "5" });
  });

  it("drops zero postings (a commission of 0) and fingerprints content, not order", () => {
    const postings = paymentCompletedPostings({ ...plain, commission: m("0"), settlement: m("1000") });
    expect(checkEntry(draft(postings))).toHaveLength(2);
    const d = draft(adjustmentPostings(SHOP, "RUB", m("5")));
    expect(fingerprint(d, d.postings)).toBe(fingerprint(d, [...d.postings].reverse()));
    const other = draft(adjustmentPostings(SHOP, "RUB", m("5.01")));
    expect(fingerprint(other, other.postings)).not.toBe(fingerprint(d, d.postings));
  });
});
