import { randomBytes } from "node:crypto";

/** Every token starts with this, so leaked keys are easy to recognise and scan for. */
export const API_KEY_PREFIX = "pgw_";
/** Characters of the token kept as its visible prefix (the "pgw_" marker plus 8 random ones). */
const VISIBLE_LENGTH = API_KEY_PREFIX.length + 8;

export interface NewApiKey {
  /** Returned once at issue; never stored. */
  plaintext: string;
  /** Shown in the console to tell keys apart. */
  prefix: string;
}

/** A new API key: 32 random bytes (256 bits), base64url, after the `pgw_` marker. */
export function generateApiKey(): NewApiKey {
  const plaintext = API_KEY_PREFIX + randomBytes(32).toString("base64url");
  return { plaintext, prefix: plaintext.slice(0, VISIBLE_LENGTH) };
}
