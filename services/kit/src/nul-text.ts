import { AppError } from "./errors";

/**
 * U+0000 in text: Postgres cannot store it in a text column, and no identifier, name or reason of
 * ours has a use for it. Requests carrying it are refused at the edge (the gateway's JSON parser,
 * the gRPC server) with a 400 / InvalidArgument naming each field, instead of failing in SQL.
 */
export const NUL_ISSUE = "must not contain the U+0000 character";

/**
 * Paths (`a.b[0]`) of every key or string value in `value` that holds U+0000: a parsed JSON body
 * or a protobuf message. Bytes fields are binary and not looked into. Walks with its own stack, not
 * recursion: a 64 KiB body can nest thousands of levels deep.
 */
export function fieldsWithNul(value: unknown): string[] {
  const found: string[] = [];
  // Depth first, in document order; a key holding U+0000 is reported in place of its value.
  const pending: { item: unknown; path: string; badKey?: true }[] = [{ item: value, path: "" }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { item, path, badKey } = next;
    if (badKey || (typeof item === "string" && item.includes("\u0000"))) found.push(path || "body");
    else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push({ item: item[i], path: `${path}[${i}]` });
    } else if (item !== null && typeof item === "object" && !(item instanceof Uint8Array)) {
      for (const [key, child] of Object.entries(item).reverse()) {
        const at = path ? `${path}.${key}` : key;
        pending.push(key.includes("\u0000") ? { item: undefined, path: at, badKey: true } : { item: child, path: at });
      }
    }
  }
  return found;
}

/** Throws a validation_error naming every field of `value` (a request) that holds U+0000. */
export function refuseNulText(value: unknown): void {
  const fields = fieldsWithNul(value);
  if (fields.length > 0) throw new AppError("validation_error", "request validation failed", fields.map((field) => ({ field, issue: NUL_ISSUE })));
}
