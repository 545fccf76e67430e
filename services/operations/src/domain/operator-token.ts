import { randomBytes } from "node:crypto";

/** Every operator token starts with this, so a leaked one is easy to recognise and scan for. */
export const OPERATOR_TOKEN_PREFIX = "pgwop_";

/** A new operator token: 32 random bytes (256 bits), base64url, after the `pgwop_` marker. Returned once; only its SHA-256 is stored. */
export function generateOperatorToken(): string {
  return OPERATOR_TOKEN_PREFIX + randomBytes(32).toString("base64url");
}

/** Names an operator may have: what the audit records as the actor, so plain and unambiguous. */
export function operatorNameIssue(name: string): string | undefined {
  if (!/^[A-Za-z0-9._@+-]{1,100}$/.test(name)) return "must be 1-100 letters, digits or . _ @ + -";
  // The bootstrap ADMIN_TOKEN acts as "admin": no operator may look like it in the audit.
  if (name.toLowerCase() === "admin") return "is reserved for the admin token";
  return undefined;
}
