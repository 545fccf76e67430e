/**
 * Values sealed at rest (card numbers, webhook signing secrets, provider secrets): AES-256-GCM under
 * data keys from the environment, each value naming the key it was sealed under, so keys rotate
 * without downtime (docs/architecture.md, Secrets and card numbers at rest).
 *
 * A sealed value is one string, `v1:<key id>:<iv>:<ciphertext>:<tag>`: base64url parts, a random
 * 96-bit IV, a 128-bit tag, and `v1:<key id>` authenticated with the ciphertext.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { ConfigError, isLocalMode } from "../runtime/config";

const VERSION = "v1";
const KEY_ID = /^[A-Za-z0-9_.-]{1,64}$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** DATA_KEYS in local mode: one key, `dev`, that anyone can read here (refused outside local mode). */
export const DEV_DATA_KEYS = "dev:cGd3LWxvY2FsLWRldmVsb3BtZW50LWRhdGEta2V5ISE=";

/** A sealed value that cannot be opened: malformed, sealed under a key not held, or altered. */
export class SealedValueError extends Error {}

/** Whether `stored` is a sealed value (anything else is a value an earlier version stored in clear). */
export const isSealed = (stored: string): boolean => stored.startsWith(`${VERSION}:`);

const b64 = (bytes: Buffer) => bytes.toString("base64url");

/** The data keys a unit holds, and the one it seals under. */
export class DataKeys {
  constructor(
    private readonly keys: ReadonlyMap<string, Buffer>,
    readonly activeId: string,
  ) {
    if (!keys.has(activeId)) throw new Error(`active data key ${activeId} is not among the keys`);
  }

  /** `plaintext` sealed under the active key; two seals of one value differ (random IV). */
  seal(plaintext: string): string {
    const header = `${VERSION}:${this.activeId}`;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.keys.get(this.activeId)!, iv);
    cipher.setAAD(Buffer.from(header));
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return `${header}:${b64(iv)}:${b64(ciphertext)}:${b64(cipher.getAuthTag())}`;
  }

  /** The plaintext of a sealed value, under whichever held key it names; throws SealedValueError. */
  open(sealed: string): string {
    const parts = sealed.split(":");
    if (parts.length !== 5 || parts[0] !== VERSION || !parts.slice(2).every((p) => BASE64URL.test(p))) {
      throw new SealedValueError(`not a sealed value (${VERSION}:<key id>:<iv>:<ciphertext>:<tag>)`);
    }
    const [, keyId, iv, ciphertext, tag] = parts;
    const key = this.keys.get(keyId);
    if (!key) throw new SealedValueError(`value sealed under data key "${keyId}", which DATA_KEYS does not hold (it holds ${[...this.keys.keys()].join(", ")})`);
    const ivBytes = Buffer.from(iv, "base64url");
    const tagBytes = Buffer.from(tag, "base64url");
    if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES) throw new SealedValueError(`sealed value under data key "${keyId}" is malformed`);
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, ivBytes);
      decipher.setAAD(Buffer.from(`${VERSION}:${keyId}`));
      decipher.setAuthTag(tagBytes);
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
    } catch {
      throw new SealedValueError(`sealed value under data key "${keyId}" failed authentication: altered, or sealed under another key of that id`);
    }
  }

  /**
   * A stored value's plaintext: opened when sealed; a value an earlier version stored in clear is
   * answered as it is, until the re-seal pass (DATA_RESEAL=only) seals it.
   */
  read(stored: string): string {
    return isSealed(stored) ? this.open(stored) : stored;
  }

  /** Whether `stored` is sealed under the active key (the re-seal pass leaves it as it is). */
  isCurrent(stored: string): boolean {
    return stored.startsWith(this.activePrefix);
  }

  /** How every value sealed under the active key begins. */
  get activePrefix(): string {
    return `${VERSION}:${this.activeId}:`;
  }

  /** Whether one of the keys is `material`. */
  holds(material: Buffer): boolean {
    return [...this.keys.values()].some((k) => k.equals(material));
  }
}

/** One DATA_KEYS entry's key: 32 bytes in standard base64. */
function keyMaterial(id: string, encoded: string): Buffer {
  const material = Buffer.from(encoded, "base64");
  if (material.length !== KEY_BYTES || material.toString("base64") !== encoded) {
    throw new ConfigError("DATA_KEYS", `key "${id}" must be ${KEY_BYTES} bytes in base64 (e.g. openssl rand -base64 32)`);
  }
  return material;
}

/**
 * Parses DATA_KEYS (`<key id>:<base64 of 32 bytes>`, comma-separated) and the active key's id
 * (DATA_KEY_ID; may be left out when there is one key). Throws ConfigError naming the variable;
 * key material never appears in a message.
 */
export function parseDataKeys(list: string, activeId: string | undefined): DataKeys {
  const keys = new Map<string, Buffer>();
  for (const entry of list.split(",").map((e) => e.trim())) {
    const separator = entry.indexOf(":");
    const id = entry.slice(0, separator);
    if (separator < 0 || !KEY_ID.test(id)) throw new ConfigError("DATA_KEYS", "must be <key id>:<base64 key> entries, comma-separated; a key id is letters, digits, _ . -");
    if (keys.has(id)) throw new ConfigError("DATA_KEYS", `names key "${id}" twice`);
    keys.set(id, keyMaterial(id, entry.slice(separator + 1)));
  }
  if (activeId === undefined) {
    if (keys.size > 1) throw new ConfigError("DATA_KEY_ID", "is required when DATA_KEYS holds more than one key");
    activeId = [...keys.keys()][0];
  }
  if (!keys.has(activeId)) throw new ConfigError("DATA_KEY_ID", `names key "${activeId}", which DATA_KEYS does not hold`);
  return new DataKeys(keys, activeId);
}

/**
 * The unit's data keys from DATA_KEYS and DATA_KEY_ID: DEV_DATA_KEYS by default in local mode;
 * outside it required, and never holding the development key.
 */
export function loadDataKeys(source: NodeJS.ProcessEnv = process.env): DataKeys {
  const local = isLocalMode(source);
  const list = source.DATA_KEYS || (local ? DEV_DATA_KEYS : undefined);
  const activeId = source.DATA_KEY_ID || undefined;
  if (!list) throw new ConfigError("DATA_KEYS", "is required");
  const keys = parseDataKeys(list, activeId);
  if (!local && keys.holds(Buffer.from(DEV_DATA_KEYS.split(":")[1], "base64"))) {
    throw new ConfigError("DATA_KEYS", "must not hold the development key outside local mode");
  }
  return keys;
}
