import { receiptLink, verifyReceiptLink } from "@pgw/contracts";
import { withFreshReceiptLinks } from "./receipt-links";

const SECRET = "test-receipt-link-secret";
const ITEM = "0b5d8c1e-2f3a-5b4c-8d6e-7f8091a2b3c4";

describe("withFreshReceiptLinks", () => {
  it("renews every receipt link of the body from now, and leaves the rest of the body as it was", () => {
    const signedAt = new Date("2026-11-26T10:00:00Z");
    const later = new Date("2026-11-26T11:00:00Z"); // the first link expired 45 minutes ago
    const stored = JSON.stringify({
      id: "msg_1",
      type: "operation.completed",
      created_at: signedAt.toISOString(),
      data: { operation_id: "op", receipts: [{ id: ITEM, amount: 10.5, receipt_url: receiptLink("https://pay.example", SECRET, ITEM, signedAt) }, { id: "other", amount: 1, receipt_url: null }] },
    });
    const sent = JSON.parse(withFreshReceiptLinks(stored, SECRET, later));
    const url = new URL(sent.data.receipts[0].receipt_url);
    expect(url.origin + url.pathname).toBe(`https://pay.example/v1/receipts/${ITEM}/file`);
    expect(verifyReceiptLink(SECRET, ITEM, Number(url.searchParams.get("expires")), url.searchParams.get("signature")!, later)).toBeNull();
    expect({ ...sent, data: { ...sent.data, receipts: sent.data.receipts.map((r: { receipt_url: unknown }) => ({ ...r, receipt_url: typeof r.receipt_url })) } }).toEqual({
      ...JSON.parse(stored),
      data: { operation_id: "op", receipts: [{ id: ITEM, amount: 10.5, receipt_url: "string" }, { id: "other", amount: 1, receipt_url: "object" }] },
    });
  });

  it("sends a body without receipt links byte for byte as stored", () => {
    const stored = '{"id":"msg_2","type":"operation.cancelled","data":{"receipts":[],"status":"cancelled"}}';
    expect(withFreshReceiptLinks(stored, SECRET, new Date())).toBe(stored);
    expect(withFreshReceiptLinks('{"id":"msg_3","data":{"receipts":[{"id":"x","receipt_url":null}]}}', SECRET, new Date())).toBe('{"id":"msg_3","data":{"receipts":[{"id":"x","receipt_url":null}]}}');
  });
});
