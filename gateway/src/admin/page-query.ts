import { AppError, isUuid, type ErrorDetail } from "@pgw/contracts";
import type { ParsedUrlQuery } from "node:querystring";

/** Where a page of a newest-first listing starts, as the services take it. */
export interface PageAfter {
  createdAt: string;
  id: string;
}

/** A listing's page as the query gives it: `cursor` (from the previous answer's next_cursor) and `limit` (1–500, default 50). */
export interface PageQuery {
  after?: PageAfter;
  limit: number;
}

// A cursor is the last row's creation time and id, base64url of "<time> <id>": opaque to callers.
const encodeCursor = (after: PageAfter) => Buffer.from(`${after.createdAt} ${after.id}`, "utf8").toString("base64url");

function decodeCursor(cursor: string): PageAfter | null {
  const [createdAt, id, ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split(" ");
  if (rest.length || !id || !isUuid(id) || Number.isNaN(Date.parse(createdAt))) return null;
  return { createdAt, id };
}

/** A query parameter given at most once: its value, or undefined; a repeated one is a detail. */
export function queryParam(query: ParsedUrlQuery, name: string, details: ErrorDetail[]): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) details.push({ field: name, issue: "must be given once" });
  return typeof value === "string" ? value : undefined;
}

/** A query parameter that must be a UUID when given: its value, or undefined; a bad one is a detail. */
export function uuidParam(query: ParsedUrlQuery, name: string, details: ErrorDetail[]): string | undefined {
  const value = queryParam(query, name, details);
  if (value !== undefined && !isUuid(value)) details.push({ field: name, issue: "must be a UUID" });
  return value;
}

/** A query parameter that must be one of `allowed` when given: its value, or undefined; a bad one is a detail. */
export function oneOfParam(query: ParsedUrlQuery, name: string, allowed: ReadonlySet<string>, details: ErrorDetail[]): string | undefined {
  const value = queryParam(query, name, details);
  if (value !== undefined && !allowed.has(value)) details.push({ field: name, issue: `must be one of ${[...allowed].join(", ")}` });
  return value;
}

/** Reads `limit` (1–500, default 50), adding a detail to `details` when it is bad. */
export function limitParam(query: ParsedUrlQuery, details: ErrorDetail[]): number {
  const raw = queryParam(query, "limit", details) ?? "50";
  const limit = Number(raw);
  if (!/^\d{1,3}$/.test(raw) || limit < 1 || limit > 500) details.push({ field: "limit", issue: "must be an integer from 1 to 500" });
  return limit;
}

/** Reads `cursor` and `limit`, adding a detail for each bad one to `details`. */
export function pageQuery(query: ParsedUrlQuery, details: ErrorDetail[]): PageQuery {
  const cursor = queryParam(query, "cursor", details);
  const after = cursor ? decodeCursor(cursor) : undefined;
  if (after === null) details.push({ field: "cursor", issue: "is not a cursor of this listing: use next_cursor as it was answered" });
  return { after: after ?? undefined, limit: limitParam(query, details) };
}

/** Throws one validation_error naming every bad query parameter, if any. */
export function refuseBadQuery(details: ErrorDetail[]): void {
  if (details.length) throw new AppError("validation_error", "invalid query", details);
}

/** The listing key of a row that has its creation time and id under these names. */
export const rowKey = (row: { createdAt: string; id: string }): PageAfter => ({ createdAt: row.createdAt, id: row.id });

/**
 * The answer of a listing asked for `limit + 1` rows: at most `limit` items and, when there was
 * one more, the cursor of the page after them (else null).
 */
export function pageAnswer<R, J>(rows: R[], limit: number, keyOf: (row: R) => PageAfter, json: (row: R) => J): { items: J[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  return { items: page.map(json), next_cursor: rows.length > limit ? encodeCursor(keyOf(page[page.length - 1])) : null };
}
