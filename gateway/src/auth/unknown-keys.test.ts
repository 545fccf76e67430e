import { createUnknownKeys } from "./unknown-keys";

/** The clock's start: lru-cache reads an entry stored at time 0 as one that never expires. */
const T0 = 1_000_000;

describe("unknown keys", () => {
  it("remembers a hash for its TTL", () => {
    let now = T0;
    const unknown = createUnknownKeys(10_000, { now: () => now })!;
    unknown.set("h1", true);
    now = T0 + 10_000;
    expect(unknown.has("h1")).toBe(true);
    now = T0 + 10_001;
    expect(unknown.has("h1")).toBe(false);
  });

  it("stays bounded, dropping the hash recorded longest ago", () => {
    const unknown = createUnknownKeys(10_000, { maxEntries: 2 })!;
    unknown.set("h1", true);
    unknown.set("h2", true);
    expect(unknown.has("h1")).toBe(true); // a lookup does not make it newer
    unknown.set("h3", true);
    expect(["h1", "h2", "h3"].map((h) => unknown.has(h))).toEqual([false, true, true]);
  });

  it("keeps none at a TTL of 0", () => {
    expect(createUnknownKeys(0)).toBeUndefined();
  });
});
