import { fieldError } from "./errors";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in its canonical textual form (any version, either case). */
export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value);
}

/** `value` lower-cased when it is a UUID; a validation_error naming `field` otherwise. */
export function requireUuid(value: string, field: string): string {
  if (!isUuid(value)) throw fieldError(field, "must be a UUID");
  return value.toLowerCase();
}
