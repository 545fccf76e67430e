/**
 * Standard Webhooks signing: `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
 * under each current secret, space-separated. A secret is `whsec_` + base64 of random bytes; the
 * HMAC key is the decoded bytes.
 */
import { createHmac, randomBytes } from "node:crypto";

export const SECRET_PREFIX = "whsec_";
/** Random bytes in a new secret (the standard asks for 24 to 64). */
export const SECRET_BYTES = 32;
/** How long a rotated-out secret keeps signing. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A new signing secret. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

/** The HMAC key of a `whsec_` secret. */
export function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, "base64");
}

/** `v1,<signature>` of one message under one secret. */
export function signV1(secret: string, webhookId: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", secretKey(secret)).update(`${webhookId}.${timestampSeconds}.${body}`, "utf8").digest("base64");
  return `v1,${mac}`;
}

/** The webhook-signature header value: one signature per secret, newest secret first. */
export function signatureHeader(secrets: readonly string[], webhookId: string, timestampSeconds: number, body: string): string {
  return secrets.map((s) => signV1(s, webhookId, timestampSeconds, body)).join(" ");
}
