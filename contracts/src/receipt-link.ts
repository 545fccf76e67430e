/**
 * Signed receipt download links (docs/architecture.md, Receipt links), pure: the signature is the
 * credential, so the gateway serves the file without an API key. Receipts issues and checks them;
 * the gateway renews the links of evidence it keeps (gateway/src/receipt-evidence.ts).
 *
 *   <PUBLIC_BASE_URL>/v1/receipts/<item_id>/file?expires=<unix seconds>&signature=<hex HMAC-SHA256 of "<item_id>.<expires>">
 */
import { constantTimeEqual, hmacHex } from "./crypto";

/** How long a link stays valid. */
export const RECEIPT_LINK_TTL_S = 15 * 60;

/** The signature of a link to `itemId` valid until `expires` (unix seconds). */
export function signReceiptLink(secret: string, itemId: string, expires: number): string {
  return hmacHex(secret, `${itemId}.${expires}`);
}

/** The link's query: `expires=…&signature=…`, valid {@link RECEIPT_LINK_TTL_S} from `now`. */
function linkQuery(secret: string, itemId: string, now: Date): string {
  const expires = Math.floor(now.getTime() / 1000) + RECEIPT_LINK_TTL_S;
  return new URLSearchParams({ expires: String(expires), signature: signReceiptLink(secret, itemId, expires) }).toString();
}

/** The path of an item's file on the gateway. */
const filePath = (itemId: string) => `/v1/receipts/${encodeURIComponent(itemId)}/file`;

/** The link to an item's file, valid {@link RECEIPT_LINK_TTL_S} from `now`. */
export function receiptLink(baseUrl: string, secret: string, itemId: string, now: Date): string {
  return `${baseUrl.replace(/\/+$/, "")}${filePath(itemId)}?${linkQuery(secret, itemId, now)}`;
}

/** Why a link is refused. */
export type LinkRefusal = "expired" | "bad_signature";

/**
 * Checks a link's signature (constant time) and lifetime. An expiry further ahead than any link
 * is issued for is refused as well, so a link never outlives its 15 minutes whatever was signed.
 */
export function verifyReceiptLink(secret: string, itemId: string, expires: number, signature: string, now: Date): LinkRefusal | null {
  const valid = constantTimeEqual(signature.toLowerCase(), signReceiptLink(secret, itemId, expires));
  if (!valid) return "bad_signature";
  const nowS = Math.floor(now.getTime() / 1000);
  if (expires <= nowS || expires > nowS + RECEIPT_LINK_TTL_S) return "expired";
  return null;
}

/** Whether `link` is a link to `itemId`'s file that receipts, signing under `secret`, would accept at `now`. */
export function isValidReceiptLink(secret: string, itemId: string, link: string, now: Date): boolean {
  const queryAt = link.indexOf("?");
  if (queryAt < 0 || !link.slice(0, queryAt).endsWith(filePath(itemId))) return false;
  const query = new URLSearchParams(link.slice(queryAt + 1));
  const expires = Number(query.get("expires"));
  return Number.isInteger(expires) && verifyReceiptLink(secret, itemId, expires, query.get("signature") ?? "", now) === null;
}

/** `link` (a valid link to `itemId`'s file, see {@link isValidReceiptLink}) valid {@link RECEIPT_LINK_TTL_S} from `now` instead. */
export function renewReceiptLink(secret: string, itemId: string, link: string, now: Date): string {
  return `${link.slice(0, link.indexOf("?"))}?${linkQuery(secret, itemId, now)}`;
}
