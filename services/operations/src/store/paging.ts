/** Keyset paging of the admin listings: newest first, by (created_at, id). */
import type { ExpressionBuilder } from "kysely";
import type { DB } from "../generated/kysely/database";

/** A page of a newest-first listing: rows before `after` (exclusive), at most `limit`. */
export interface Page {
  after: { createdAt: Date; id: string } | null;
  limit: number;
}

type Paged = "operations" | "merchants" | "shops";

/** The condition "comes after the cursor" of a newest-first listing of `table`. */
export function afterCursor<T extends Paged>(after: NonNullable<Page["after"]>) {
  return (eb: ExpressionBuilder<DB, T>) =>
    eb(eb.refTuple("createdAt" as never, "id" as never), "<", eb.tuple(after.createdAt as never, after.id as never));
}

/** Like-pattern matching `text` anywhere, its own `%`, `_` and `\` taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
