import { AppError, type ErrorDetail } from "@pgw/kit";

/** The body as a JSON object, or a 400. */
export function jsonObject(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new AppError("validation_error", "request body must be a JSON object", [{ field: "body", issue: "must be a JSON object" }]);
  }
  return body as Record<string, unknown>;
}

/**
 * Reads string fields of a JSON body: absent or null → undefined; any other non-string → a detail.
 * Semantic rules (required, formats) are the service's; this only guards the JSON types.
 */
export function stringFields<K extends string>(body: Record<string, unknown>, names: readonly K[]): Record<K, string | undefined> {
  const details: ErrorDetail[] = [];
  const out = {} as Record<K, string | undefined>;
  for (const name of names) {
    const value = body[name];
    if (value === undefined || value === null) out[name] = undefined;
    else if (typeof value === "string") out[name] = value;
    else details.push({ field: name, issue: "must be a string" });
  }
  if (details.length) throw new AppError("validation_error", "request validation failed", details);
  return out;
}
