import { AppError } from "@pgw/contracts";
import type { z } from "zod";
import { jsonObject } from "./json-fields";

/** Parses a JSON body with `schema`; a mismatch is a 400 whose details name every bad field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(jsonObject(body));
  if (result.success) return result.data;
  const details = result.error.issues.map((i) => ({ field: i.path.join(".") || "body", issue: i.message }));
  throw new AppError("validation_error", "request validation failed", details);
}
