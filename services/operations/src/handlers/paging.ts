import { AppError, fieldError, isUuid } from "@pgw/contracts";
import type { PageAfter } from "@pgw/proto/gen/pgw/operations/v1/paging_pb";
import type { Page } from "../store";

/** A listing's page from the wire: `limit` 1–500 (50 when 0) and where it starts; a bad start is a validation_error on `cursor`. */
export function pageOf(after: PageAfter | undefined, limit: number): Page {
  const at = after ? new Date(after.createdAt) : null;
  if (after && (!isUuid(after.id) || Number.isNaN(at!.getTime()))) throw new AppError("validation_error", "invalid cursor", [{ field: "cursor", issue: "is not a cursor of this listing" }]);
  return { after: after ? { createdAt: at!, id: after.id.toLowerCase() } : null, limit: Math.min(Math.max(limit || 50, 1), 500) };
}

/** An optional RFC 3339 time of a filter, or a validation_error naming `field`. */
export function timeOf(value: string | undefined, field: string): Date | undefined {
  if (value === undefined) return undefined;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw fieldError(field, "must be an RFC 3339 time");
  return at;
}
