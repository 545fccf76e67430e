import { hmacHex } from "@pgw/contracts";
import { randomBytes } from "node:crypto";
import { KeyHashes } from "./key-hashes";

const SECRET = "test-secret";
const newKey = () => `pgw_${randomBytes(32).toString("base64url")}`;

describe("HMACs of presented API keys", () => {
  it("answers each key's HMAC under the secret, when first seen, seen again, and after it was evicted", () => {
    const hashes = new KeyHashes(SECRET, 2);
    const [a, b, c] = [newKey(), newKey(), newKey()];
    for (const key of [a, a, b, c, a, b, a]) expect(hashes.of(key)).toBe(hmacHex(SECRET, key));
  });

  it("holds nothing a key can be read or matched from without its random prefix", () => {
    const key = newKey();
    const [one, other] = [new KeyHashes(SECRET), new KeyHashes(SECRET)];
    one.of(key);
    other.of(key);
    const held = (hashes: KeyHashes) => [...(hashes as unknown as { hashes: Map<string, string> }).hashes.keys()];
    expect(held(one)).toHaveLength(1);
    expect(held(one)[0]).not.toContain(key);
    expect(held(one)).not.toEqual(held(other));
  });
});
