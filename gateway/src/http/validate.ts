import { AppError } from "@pgw/kit";
import type { z } from "zod";

/** Parses a JSON body with `schema`; a mismatch is a 400 whose details name every bad field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new AppError("validation_error", "request body must be a JSON object", [{ field: "body", issue: "must be a JSON object" }]);
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const details = result.error.issues.map((i) => ({ field: i.path.join(".") || "body", issue: i.message }));
  throw new AppError("validation_error", "request validation failed", details);
}
