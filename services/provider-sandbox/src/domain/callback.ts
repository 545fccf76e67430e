import { constantTimeEqual, hmacHex } from "@pgw/contracts";
import type { CallbackStatus } from "./operation-state";

/** Header carrying the hex HMAC-SHA256 of the raw callback body. */
export const SIGNATURE_HEADER = "x-sandbox-signature";

/** JSON body of a provider callback (POSTed to the operation's callback_url). */
export interface CallbackPayload {
  /** Unique per callback; every retry of it carries the same id. */
  callback_id: string;
  reference: string;
  operation_id: string;
  status: CallbackStatus;
  /** Paid or settled amount; only on `completed`. */
  amount?: string;
  occurred_at: string;
}

/** Hex HMAC-SHA256 of the exact raw body under the callback secret. */
export function signCallback(secret: string, rawBody: string): string {
  return hmacHex(secret, rawBody);
}

/** Whether `signature` is the signature of `rawBody` under `secret` (constant time). */
export function verifyCallback(secret: string, rawBody: string, signature: string): boolean {
  return constantTimeEqual(signCallback(secret, rawBody), signature.toLowerCase());
}

/** Waits before each retry of a failed callback: base, 2×base, 4×base… (`attempts` − 1 of them). */
export function retryDelays(baseMs: number, attempts: number): number[] {
  return Array.from({ length: Math.max(attempts - 1, 0) }, (_, i) => baseMs * 2 ** i);
}
