import fc from "fast-check";
import { isValidReceiptLink, RECEIPT_LINK_TTL_S, receiptLink, renewReceiptLink, signReceiptLink, verifyReceiptLink } from "@pgw/contracts";

const SECRET = "test-secret";
const ITEM = "0d5a3a8e-6b0f-4a53-8a52-3c1f4c9e2b11";
const NOW = new Date("2026-03-01T12:00:00Z");
const nowS = NOW.getTime() / 1000;

describe("receipt links", () => {
  it("has the documented shape and verifies for 15 minutes", () => {
    const link = new URL(receiptLink("https://pay.example.com/", SECRET, ITEM, NOW));
    expect(link.origin + link.pathname).toBe(`https://pay.example.com/v1/receipts/${ITEM}/file`);
    const expires = Number(link.searchParams.get("expires"));
    expect(expires).toBe(nowS + RECEIPT_LINK_TTL_S);
    expect(link.searchParams.get("signature")).toBe(signReceiptLink(SECRET, ITEM, expires));
    const sig = link.searchParams.get("signature")!;
    expect(verifyReceiptLink(SECRET, ITEM, expires, sig, NOW)).toBeNull();
    expect(verifyReceiptLink(SECRET, ITEM, expires, sig, new Date((expires - 1) * 1000))).toBeNull();
    expect(verifyReceiptLink(SECRET, ITEM, expires, sig, new Date(expires * 1000))).toBe("expired");
  });

  it("refuses a correctly signed expiry further ahead than a link is ever issued for", () => {
    const far = nowS + RECEIPT_LINK_TTL_S + 1;
    expect(verifyReceiptLink(SECRET, ITEM, far, signReceiptLink(SECRET, ITEM, far), NOW)).toBe("expired");
  });

  it("refuses any altered item, expiry, signature or secret", () => {
    const expires = nowS + 60;
    const sig = signReceiptLink(SECRET, ITEM, expires);
    fc.assert(
      fc.property(fc.nat({ max: 63 }), fc.constantFrom(..."0123456789abcdef"), (pos, c) => {
        const altered = sig.slice(0, pos) + c + sig.slice(pos + 1);
        return altered === sig || verifyReceiptLink(SECRET, ITEM, expires, altered, NOW) === "bad_signature";
      }),
    );
    expect(verifyReceiptLink(SECRET, ITEM.replace("0d5", "0d6"), expires, sig, NOW)).toBe("bad_signature");
    expect(verifyReceiptLink(SECRET, ITEM, expires + 1, sig, NOW)).toBe("bad_signature");
    expect(verifyReceiptLink("other-secret", ITEM, expires, sig, NOW)).toBe("bad_signature");
    expect(verifyReceiptLink(SECRET, ITEM, expires, sig.slice(0, 10), NOW)).toBe("bad_signature");
  });
});

describe("link renewal", () => {
  const issued = receiptLink("https://pay.example.com", SECRET, ITEM, NOW);
  const later = new Date(NOW.getTime() + 20 * 60_000); // the issued link has expired by then

  it("re-signs a link with a full lifetime from now, keeping its origin and path", () => {
    const renewed = renewReceiptLink(SECRET, ITEM, issued, later);
    expect(renewed).toBe(receiptLink("https://pay.example.com", SECRET, ITEM, later));
    expect(isValidReceiptLink(SECRET, ITEM, renewed, later)).toBe(true);
    expect(new URL(renewed).searchParams.get("expires")).toBe(String(later.getTime() / 1000 + RECEIPT_LINK_TTL_S));
  });

  it("accepts only a link receipts would accept: same secret, same item, not expired, well formed", () => {
    expect(isValidReceiptLink(SECRET, ITEM, issued, NOW)).toBe(true);
    expect(isValidReceiptLink("other-secret", ITEM, issued, NOW)).toBe(false);
    expect(isValidReceiptLink(SECRET, ITEM.replace("0d5", "0d6"), issued, NOW)).toBe(false);
    expect(isValidReceiptLink(SECRET, ITEM, issued, later)).toBe(false);
    expect(isValidReceiptLink(SECRET, ITEM, issued.replace(/\?.*/, ""), NOW)).toBe(false);
    expect(isValidReceiptLink(SECRET, ITEM, issued.replace(/expires=\d+/, "expires=soon"), NOW)).toBe(false);
    expect(isValidReceiptLink(SECRET, ITEM, issued.replace("/file?", "/other?"), NOW)).toBe(false);
  });
});
