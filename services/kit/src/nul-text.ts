import { AppError } from "./errors";

/**
 * U+0000 in text: Postgres cannot store it in a text column, and no identifier, name or reason of
 * ours has a use for it. Requests carrying it are refused at the edge (the gateway's JSON parser,
 * the gRPC server) with a 400 / InvalidArgument naming each field, instead of failing in SQL.
 */
export const NUL_ISSUE = "must not contain the U+0000 character";

/**
 * Paths (`a.b[0]`) of every key or string value in `value` that holds U+0000: a parsed JSON body
 * or a protobuf message. Bytes fields are binary and not looked into.
 */
export function fieldsWithNul(value: unknown, path = ""): string[] {
  if (typeof value === "string") return value.includes("\u0000") ? [path || "body"] : [];
  if (value instanceof Uint8Array) return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => fieldsWithNul(item, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const at = path ? `${path}.${key}` : key;
    return key.includes("\u0000") ? [at] : fieldsWithNul(item, at);
  });
}

/** Throws a validation_error naming every field of `value` (a request) that holds U+0000. */
export function refuseNulText(value: unknown): void {
  const fields = fieldsWithNul(value);
  if (fields.length > 0) throw new AppError("validation_error", "request validation failed", fields.map((field) => ({ field, issue: NUL_ISSUE })));
}
