import { Money } from "@pgw/contracts";
import fc from "fast-check";
import { FORGERY_SIGNS, UNVERIFIABLE, type Finding, type FindingCode } from "./findings";
import { decideReview, inspectReceiptText, type Funds } from "./review";

const arrived: Funds = { state: "arrived", amount: new Money("1500.00") };
const inProgress: Funds = { state: "in_progress" };
const notFound: Funds = { state: "not_found" };
const unknown: Funds = { state: "unknown" };
const f = (...codes: FindingCode[]): Finding[] => codes.map((code) => ({ code }));

describe("decideReview: the decision table of review.ts, row by row", () => {
  it.each<[string, "pdf" | "image", Finding[], Funds, ReturnType<typeof decideReview>]>([
    ["1 image, money arrived", "image", f("not_a_pdf"), arrived, { outcome: "manual_check", reason: "not_terminal" }],
    ["1 image, money never came", "image", f("not_a_pdf"), notFound, { outcome: "manual_check", reason: "not_terminal" }],
    ["2 tampered, money never came", "pdf", f("incremental_update"), notFound, { outcome: "declined" }],
    ["2 wrong amount, money never came", "pdf", f("amount_mismatch"), notFound, { outcome: "declined" }],
    ["3 tampered, money arrived", "pdf", f("incremental_update"), arrived, { outcome: "manual_check", reason: "potential_fake" }],
    ["3 wrong destination, in progress", "pdf", f("destination_mismatch"), inProgress, { outcome: "manual_check", reason: "potential_fake" }],
    ["3 script, provider down", "pdf", f("javascript"), unknown, { outcome: "manual_check", reason: "potential_fake" }],
    ["3 forgery wins over unreadable", "pdf", f("amount_missing", "suspicious_producer"), arrived, { outcome: "manual_check", reason: "potential_fake" }],
    ["4 no text layer, money arrived", "pdf", f("no_text"), arrived, { outcome: "manual_check", reason: "not_terminal" }],
    ["4 no amount, provider down", "pdf", f("amount_missing"), unknown, { outcome: "manual_check", reason: "not_terminal" }],
    ["5 clean, arrived", "pdf", f("funds_arrived"), arrived, { outcome: "completed", actualAmount: new Money("1500.00") }],
    ["6 clean, arrived without an amount", "pdf", [], { state: "arrived" }, { outcome: "manual_check", reason: "not_terminal" }],
    ["6 clean, in progress", "pdf", f("declared_type_mismatch"), inProgress, { outcome: "manual_check", reason: "not_terminal" }],
    ["7 clean, money never came", "pdf", [], notFound, { outcome: "manual_check", reason: "potential_fake" }],
    ["8 clean, provider down", "pdf", f("provider_unavailable"), unknown, { outcome: "retry" }],
  ])("%s", (_row, kind, findings, funds, expected) => {
    expect(decideReview(kind, findings, funds)).toEqual(expected);
  });

  const anyFunds = fc.constantFrom<Funds>(arrived, inProgress, notFound, unknown, { state: "arrived" });
  const someOf = (codes: readonly FindingCode[]) => fc.subarray([...codes], { minLength: 1 }).map((cs) => cs.map((code) => ({ code })));

  it("never completes a receipt that shows a forgery sign, and never declines without the provider's word", () => {
    fc.assert(
      fc.property(someOf(FORGERY_SIGNS), fc.subarray([...UNVERIFIABLE]), anyFunds, (forgery, unreadable, funds) => {
        const d = decideReview("pdf", [...forgery, ...unreadable.map((code) => ({ code }))], funds);
        return d.outcome === "declined" ? funds.state === "not_found" : d.outcome === "manual_check" && d.reason === "potential_fake";
      }),
    );
  });

  it("completes only with the amount the provider says arrived, never without one", () => {
    fc.assert(
      fc.property(fc.subarray([...FORGERY_SIGNS, ...UNVERIFIABLE]), anyFunds, fc.constantFrom<"pdf" | "image">("pdf", "image"), (codes, funds, kind) => {
        const d = decideReview(kind, codes.map((code) => ({ code })), funds);
        return d.outcome !== "completed" || (funds.state === "arrived" && funds.amount !== undefined && d.actualAmount.eq(funds.amount));
      }),
    );
  });

  it("never calls an unreadable document a fake", () => {
    fc.assert(
      fc.property(someOf(UNVERIFIABLE), anyFunds, fc.constantFrom<"pdf" | "image">("pdf", "image"), (unreadable, funds, kind) => {
        const d = decideReview(kind, unreadable, funds);
        return d.outcome === "manual_check" && d.reason === "not_terminal";
      }),
    );
  });
});

describe("inspectReceiptText", () => {
  const expected = { amount: new Money("1500.00"), destination: "4111111111111111" };
  const text = (amount: string, recipient = "4111 1111 1111 1111") => `Payment receipt\nAmount: ${amount} RUB\nRecipient: ${recipient}`;
  const codes = (t: string, funds: Funds = inProgress) => inspectReceiptText(t, expected, funds).map((x) => x.code);

  it.each([
    ["matching receipt", text("1500.00"), inProgress, []],
    ["wrong amount", text("1400.00"), inProgress, ["amount_mismatch"]],
    ["wrong recipient", text("1500.00", "5555 5555 5555 4444"), inProgress, ["destination_mismatch"]],
    ["no amount", "Payment receipt\nRecipient: 4111111111111111", inProgress, ["amount_missing"]],
    ["no recipient", "Amount: 1500.00 RUB", inProgress, ["destination_missing"]],
    ["provider received less than the receipt shows", text("1500.00"), { state: "arrived", amount: new Money("1000.00") }, ["amount_differs_from_provider"]],
    ["provider received what the receipt shows", text("1500.00"), arrived, []],
    ["no text", "  ", inProgress, []],
  ])("%s", (_name, t, funds, expectedCodes) => {
    expect(codes(t, funds as Funds)).toEqual(expectedCodes);
  });
});
