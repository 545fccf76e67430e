import { AppError, type ErrorDetail } from "./errors";

/**
 * Text that Postgres cannot store as sent, refused at the edge (the gateway's JSON parser, the
 * gRPC server) with a 400 / InvalidArgument naming each field, instead of failing in SQL or being
 * stored as something else:
 * - U+0000: a text column cannot hold it, and no identifier, name or reason of ours has a use for it;
 * - a lone UTF-16 surrogate (JSON `"\ud800"`): UTF-8 cannot encode it, so it would reach the
 *   database as U+FFFD, and two different keys sent with different lone surrogates would become one.
 */
export const NUL_ISSUE = "must not contain the U+0000 character";
export const LONE_SURROGATE_ISSUE = "must be valid Unicode text (it holds a lone surrogate)";

/** A surrogate code point: in a `u` regex, paired surrogates read as one astral character, so only lone ones match. */
const LONE_SURROGATE = /\p{Cs}/u;

function textIssue(text: string): string | undefined {
  if (text.includes("\u0000")) return NUL_ISSUE;
  if (LONE_SURROGATE.test(text)) return LONE_SURROGATE_ISSUE;
  return undefined;
}

/**
 * Every key or string value in `value` (a parsed JSON body or a protobuf message) that Postgres
 * cannot store, by path (`a.b[0]`). Bytes fields are binary and not looked into. Walks with its own
 * stack, not recursion: a 64 KiB body can nest thousands of levels deep.
 */
export function unstorableText(value: unknown): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  // Depth first, in document order; a bad key is reported in place of its value.
  const pending: { item: unknown; path: string; keyIssue?: string }[] = [{ item: value, path: "" }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { item, path, keyIssue } = next;
    const issue = keyIssue ?? (typeof item === "string" ? textIssue(item) : undefined);
    if (issue) found.push({ field: path || "body", issue });
    else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push({ item: item[i], path: `${path}[${i}]` });
    } else if (item !== null && typeof item === "object" && !(item instanceof Uint8Array)) {
      for (const [key, child] of Object.entries(item).reverse()) {
        const at = path ? `${path}.${key}` : key;
        const bad = textIssue(key);
        pending.push(bad ? { item: undefined, path: at, keyIssue: bad } : { item: child, path: at });
      }
    }
  }
  return found;
}

/** Throws a validation_error naming every field of `value` (a request) that Postgres cannot store. */
export function refuseUnstorableText(value: unknown): void {
  const details = unstorableText(value);
  if (details.length > 0) throw new AppError("validation_error", "request validation failed", details);
}
