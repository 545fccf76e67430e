import { hmacHex } from "@pgw/contracts";
import { LRUCache } from "lru-cache";
import { hash, randomBytes } from "node:crypto";

/**
 * The HMAC (under API_KEY_HASH_SECRET) of each presented API key, computed once per key rather than
 * on every request: on a cached read the HMAC was about a twentieth of the gateway's CPU, and a
 * SHA-256 of the key costs an eighth of an HMAC. The HMACs are held by a fingerprint of the key, a
 * SHA-256 under a random prefix this process alone knows, never by the key itself. At most
 * `maxEntries` keys (past that the least recently used goes and is hashed again when it returns).
 */
export class KeyHashes {
  private readonly prefix = randomBytes(32).toString("base64");
  private readonly hashes: LRUCache<string, string>;

  constructor(
    private readonly secret: string,
    maxEntries = 10_000,
  ) {
    this.hashes = new LRUCache({ max: maxEntries });
  }

  /** hmacHex(secret, key). */
  of(key: string): string {
    const fingerprint = hash("sha256", this.prefix + key, "base64");
    let keyHash = this.hashes.get(fingerprint);
    if (keyHash === undefined) {
      keyHash = hmacHex(this.secret, key);
      this.hashes.set(fingerprint, keyHash);
    }
    return keyHash;
  }
}
