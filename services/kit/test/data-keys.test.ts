import { randomBytes } from "node:crypto";
import { ConfigError } from "@pgw/kit/runtime";
import { DEV_DATA_KEYS, isSealed, loadDataKeys, parseDataKeys, SealedValueError } from "@pgw/kit/db";

const keyA = randomBytes(32).toString("base64");
const keyB = randomBytes(32).toString("base64");
const both = (active: string) => parseDataKeys(`a:${keyA}, b:${keyB}`, active);

/** The sealed value with one base64url part (2 iv, 3 ciphertext, 4 tag) changed in its first byte. */
function tampered(sealed: string, part: number): string {
  const parts = sealed.split(":");
  const bytes = Buffer.from(parts[part], "base64url");
  bytes[0] ^= 1;
  parts[part] = bytes.toString("base64url");
  return parts.join(":");
}

function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("no ConfigError");
}

describe("sealed values", () => {
  it("round-trip under the active key, naming it, with a new IV each time", () => {
    const keys = both("b");
    const first = keys.seal("4111111111111111");
    const second = keys.seal("4111111111111111");
    expect(first).toMatch(/^v1:b:[\w-]{16}:[\w-]+:[\w-]{22}$/);
    expect(first).not.toBe(second);
    expect(first).not.toContain("4111111111111111");
    expect([keys.open(first), keys.open(second)]).toEqual(["4111111111111111", "4111111111111111"]);
    expect(keys.open(keys.seal(""))).toBe("");
    expect(keys.open(keys.seal("whsec_ключ ✓"))).toBe("whsec_ключ ✓");
    expect(keys.isCurrent(first)).toBe(true);
  });

  it("open under any key held, so values sealed before a rotation stay readable", () => {
    const sealedUnderA = both("a").seal("secret");
    const afterRotation = both("b");
    expect(afterRotation.open(sealedUnderA)).toBe("secret");
    expect(afterRotation.isCurrent(sealedUnderA)).toBe(false);
  });

  it.each([
    [2, "iv"],
    [3, "ciphertext"],
    [4, "tag"],
  ])("refuse a value whose %s part (%s) was altered", (part) => {
    const keys = both("a");
    expect(() => keys.open(tampered(keys.seal("4111111111111111"), part))).toThrow(new SealedValueError('sealed value under data key "a" failed authentication: altered, or sealed under another key of that id'));
  });

  it("refuse a value relabelled with another held key's id, and one sealed under another key of the same id", () => {
    const sealed = both("a").seal("x");
    expect(() => both("a").open(sealed.replace(/^v1:a:/, "v1:b:"))).toThrow(/under data key "b" failed authentication/);
    const impostor = parseDataKeys(`a:${keyB}`, undefined);
    expect(() => impostor.open(sealed)).toThrow(/under data key "a" failed authentication/);
  });

  it("say which key a value needs when it is not held", () => {
    const sealed = both("b").seal("x");
    expect(() => parseDataKeys(`a:${keyA}`, undefined).open(sealed)).toThrow(new SealedValueError('value sealed under data key "b", which DATA_KEYS does not hold (it holds a)'));
  });

  it("refuse what is no sealed value, and read a value stored in clear by an earlier version as it is", () => {
    const keys = both("a");
    for (const bad of ["4111111111111111", "v1:a:only", "v2:a:x:y:z", "v1:a:!!:x:y"]) expect(() => keys.open(bad)).toThrow(SealedValueError);
    expect(() => keys.open(`v1:a:${randomBytes(12).toString("base64url")}:AA:${randomBytes(8).toString("base64url")}`)).toThrow(/malformed/);
    expect(isSealed("4111111111111111")).toBe(false);
    expect(keys.read("4111111111111111")).toBe("4111111111111111");
    expect(keys.read(keys.seal("4111111111111111"))).toBe("4111111111111111");
    expect(() => keys.read(tampered(keys.seal("x"), 4))).toThrow(SealedValueError);
  });
});

describe("DATA_KEYS and DATA_KEY_ID", () => {
  it("take one key without an active id, and several with one", () => {
    expect(parseDataKeys(`k1:${keyA}`, undefined).activeId).toBe("k1");
    expect(both("b").activeId).toBe("b");
  });

  it.each([
    ["two keys, no active id", `a:${keyA},b:${keyB}`, undefined, "DATA_KEY_ID", "is required when DATA_KEYS holds more than one key"],
    ["an active id not held", `a:${keyA}`, "b", "DATA_KEY_ID", 'names key "b", which DATA_KEYS does not hold'],
    ["a key id twice", `a:${keyA},a:${keyB}`, "a", "DATA_KEYS", 'names key "a" twice'],
    ["a 16-byte key", `a:${randomBytes(16).toString("base64")}`, undefined, "DATA_KEYS", 'key "a" must be 32 bytes in base64'],
    ["a key that is not base64", `a:${keyA.slice(0, -1)}!`, undefined, "DATA_KEYS", 'key "a" must be 32 bytes in base64'],
    ["a key without an id", keyA, undefined, "DATA_KEYS", "must be <key id>:<base64 key> entries"],
    ["an id with a space", `a b:${keyA}`, undefined, "DATA_KEYS", "must be <key id>:<base64 key> entries"],
  ])("refuse %s, naming the variable, without showing key material", (_case, list, active, variable, message) => {
    const err = configErrorOf(() => parseDataKeys(list, active));
    expect(err.variable).toBe(variable);
    expect(err.message).toContain(message);
    expect(err.message).not.toContain(keyA.slice(0, 10));
  });

  it("default to the development key in local mode only, and refuse it outside", () => {
    expect(loadDataKeys({ LOCAL_MODE: "true" }).activeId).toBe("dev");
    expect(configErrorOf(() => loadDataKeys({})).message).toBe("invalid configuration: DATA_KEYS is required");
    expect(configErrorOf(() => loadDataKeys({ DATA_KEYS: `${DEV_DATA_KEYS},a:${keyA}`, DATA_KEY_ID: "a" })).message).toContain("must not hold the development key outside local mode");
    expect(loadDataKeys({ DATA_KEYS: `a:${keyA}` }).activeId).toBe("a");
  });
});
