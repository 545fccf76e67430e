import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** HMAC-SHA256 of `value` under `secret`, hex. */
export function hmacHex(secret: string, value: string): string {
  return createHmac("sha256", secret).update(value, "utf8").digest("hex");
}

/** SHA-256 of `value`, hex: enough to store a 256-bit random token (no key needed, as none can be guessed). */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

/** Compares two strings without leaking where they differ through timing. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, "utf8");
  const bb = Buffer.from(b, "utf8");
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
