import { AppError, NOT_A_STRING, type ErrorDetail } from "@pgw/contracts";

/** Whether a parsed JSON body is an object (not null, an array or a scalar). */
export function isJsonObject(body: unknown): body is Record<string, unknown> {
  return body !== null && typeof body === "object" && !Array.isArray(body);
}

/** The body as a JSON object, or a 400. */
export function jsonObject(body: unknown): Record<string, unknown> {
  if (!isJsonObject(body)) {
    throw new AppError("validation_error", "request body must be a JSON object", [{ field: "body", issue: "must be a JSON object" }]);
  }
  return body;
}

/**
 * Reads string fields of a JSON body: absent or null → undefined, and so is any other non-string,
 * whose name is listed in `wronglyTyped`. Semantic rules (required, formats) are the service's;
 * this only reads the JSON types.
 */
export function readStringFields<K extends string>(body: Record<string, unknown>, names: readonly K[]): { values: Record<K, string | undefined>; wronglyTyped: K[] } {
  const values = {} as Record<K, string | undefined>;
  const wronglyTyped: K[] = [];
  for (const name of names) {
    const value = body[name];
    if (typeof value === "string") values[name] = value;
    else if (value !== undefined && value !== null) wronglyTyped.push(name);
  }
  return { values, wronglyTyped };
}

/** {@link readStringFields}, with a 400 naming every field of another JSON type. */
export function stringFields<K extends string>(body: Record<string, unknown>, names: readonly K[]): Record<K, string | undefined> {
  const { values, wronglyTyped } = readStringFields(body, names);
  if (wronglyTyped.length) throw new AppError("validation_error", "request validation failed", wronglyTyped.map((field): ErrorDetail => ({ field, issue: NOT_A_STRING })));
  return values;
}
