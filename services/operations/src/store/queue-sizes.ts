/** The sizes of the work queues people act on, for the unit's gauges (metrics.ts), read at each scrape. */
import type { Sql } from "./db";

/** Operations waiting for an admin's manual check (the status index answers it). */
export async function countManualChecks(db: Sql): Promise<number> {
  const row = await db.selectFrom("operations").select((eb) => eb.fn.countAll<string>().as("n")).where("status", "=", "manual_check").executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Late funds not yet resolved (a short table: one row per operation that ever had late money). */
export async function countOpenLateFunds(db: Sql): Promise<number> {
  const row = await db.selectFrom("lateFunds").select((eb) => eb.fn.countAll<string>().as("n")).where("resolvedAt", "is", null).executeTakeFirstOrThrow();
  return Number(row.n);
}
