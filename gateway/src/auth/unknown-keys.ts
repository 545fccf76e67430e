import { LRUCache } from "lru-cache";

/**
 * Key hashes operations has just answered "no such key" for (unknown or revoked), kept for a short
 * TTL so a flood of one made-up key costs one call to operations per TTL, not one per request.
 *
 * Why this never refuses a key that works: an entry only says what operations answered, and the
 * answer can change only one way that matters, a key being issued after its hash was cached here.
 * Keys are 256 random bits made by operations at issue, so no one can present a key before it is
 * issued without guessing it; the only key a caller can make the gateway cache is one that does
 * not exist and never will. A revoked key stays revoked, so its entry is right for ever. The TTL
 * only bounds a mistake outside that reasoning: API_KEY_HASH_SECRET differing between the gateway
 * and operations during a rotation makes every key unknown until both agree, then at most one TTL
 * more.
 */
export type UnknownKeys = LRUCache<string, true>;

/**
 * The unknown-key cache: an lru-cache of at most `maxEntries` hashes (past it the one recorded
 * longest ago goes, which costs one more call), each for `ttlMs`. None when `ttlMs` is 0: every
 * unknown key then asks operations (lru-cache would read a TTL of 0 as "never expires").
 */
export function createUnknownKeys(ttlMs: number, { maxEntries = 100_000, now }: { maxEntries?: number; now?: () => number } = {}): UnknownKeys | undefined {
  if (ttlMs <= 0) return undefined;
  // ttlResolution 0: read the clock at every check (by default lru-cache keeps one reading for 1 ms).
  return new LRUCache<string, true>({ max: maxEntries, ttl: ttlMs, ttlResolution: 0, ...(now && { perf: { now } }) });
}
