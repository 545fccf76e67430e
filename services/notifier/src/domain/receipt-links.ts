import { renewReceiptLink } from "@pgw/contracts";

/**
 * A webhook body as it goes out on one attempt. Its `data` is the operation as get_operation_state
 * showed it at the transition, and the receipt links in it are valid 15 minutes from when they were
 * signed: every attempt (retries come up to 3 days later, redeliveries any time) renews them from
 * `now`, so the links a receiver gets work. A body without links goes out byte for byte as stored.
 */
export function withFreshReceiptLinks(payload: string, secret: string, now: Date): string {
  const body = JSON.parse(payload) as { data?: { receipts?: unknown } };
  const receipts = body.data?.receipts;
  if (!Array.isArray(receipts)) return payload;
  let renewed = false;
  for (const item of receipts as { id?: unknown; receipt_url?: unknown }[]) {
    if (typeof item?.id !== "string" || typeof item.receipt_url !== "string" || !item.receipt_url.includes("?")) continue;
    item.receipt_url = renewReceiptLink(secret, item.id, item.receipt_url, now);
    renewed = true;
  }
  return renewed ? JSON.stringify(body) : payload;
}
