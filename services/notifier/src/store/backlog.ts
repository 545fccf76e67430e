/** The webhook backlog, for the unit's gauges (jobs/delivery-metrics.ts), read at each scrape. */
import { sql } from "kysely";
import { statusLit, type NotifierSql } from "./db";

/** Deliveries pending (due, retrying or waiting for a URL) and the age of the oldest, in seconds (0 when none); the (status, next_attempt_at) index finds them. */
export async function pendingDeliveries(db: NotifierSql): Promise<{ count: number; oldestAgeSeconds: number }> {
  const row = await db
    .selectFrom("deliveries")
    .select([sql<string>`count(*)`.as("count"), sql<number | null>`extract(epoch from now() - min(created_at))::float8`.as("oldest")])
    .where("status", "=", statusLit("pending"))
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), oldestAgeSeconds: Math.max(0, row.oldest ?? 0) };
}
