/** The outbox as the record of status events: what `ListStatusEvents` replays to other units' reconcilers. */
import { STATUS_CHANGED_SUBJECT_LIKE } from "@pgw/proto/subjects";
import { sql } from "kysely";
import type { Sql } from "./db";

/** Published status events created after `since`, oldest first (`createdAt`, then id), at most `limit`. */
export function publishedStatusEvents(db: Sql, since: Date, limit: number) {
  return (
    db
      .selectFrom("outbox")
      .select(["id", "payload", "createdAt"])
      // The pattern is written into the statement (ours, no quotes) so the partial index matches it.
      .where("subject", "like", sql.lit(STATUS_CHANGED_SUBJECT_LIKE))
      .where("createdAt", ">", since)
      .where("publishedAt", "is not", null)
      .orderBy("createdAt")
      .orderBy("id")
      .limit(limit)
      .execute()
  );
}
