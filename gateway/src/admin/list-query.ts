import { AppError, isUuid, type ErrorDetail } from "@pgw/contracts";
import type { ParsedUrlQuery } from "node:querystring";

/** The filters every admin listing takes: `shop_id` (a UUID) and `limit` (1–500, default 50). */
export interface ListQuery {
  shopId?: string;
  limit: number;
}

/**
 * Reads the common listing filters plus one enumerated filter (`name`, one of `allowed`); throws a
 * validation_error naming every bad parameter.
 */
export function parseListQuery(query: ParsedUrlQuery, filter: { name: string; allowed: ReadonlySet<string> }): ListQuery & { filter?: string } {
  const shopId = typeof query.shop_id === "string" ? query.shop_id : undefined;
  const value = typeof query[filter.name] === "string" ? (query[filter.name] as string) : undefined;
  const limit = Number(query.limit ?? 50);
  const details: ErrorDetail[] = [
    ...(shopId !== undefined && !isUuid(shopId) ? [{ field: "shop_id", issue: "must be a UUID" }] : []),
    ...(value !== undefined && !filter.allowed.has(value) ? [{ field: filter.name, issue: `must be one of ${[...filter.allowed].join(", ")}` }] : []),
    ...(!Number.isInteger(limit) || limit < 1 || limit > 500 ? [{ field: "limit", issue: "must be an integer from 1 to 500" }] : []),
  ];
  if (details.length) throw new AppError("validation_error", "invalid query", details);
  return { shopId, filter: value, limit };
}
