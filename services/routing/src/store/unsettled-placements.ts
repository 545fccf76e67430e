/** Provider creates whose outcome is unknown, with their check schedule (jobs/unsettled-placements.ts). */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import type { Queries } from "./index";
import { PROVIDER_JSON } from "./providers";

/** A provider create with an unknown outcome, to be checked at the provider from `firstCheckAt`. */
export async function recordUnsettledPlacement(db: Queries, p: { operationId: string; providerId: string; type: string; firstCheckAt: Date }): Promise<void> {
  await db.insertInto("unsettledPlacements").values({ id: randomUUID(), operationId: p.operationId, providerId: p.providerId, type: p.type, nextCheckAt: p.firstCheckAt }).execute();
}

/**
 * Claims up to `limit` unsettled placements that are due, earliest first, with their providers:
 * their next check moves `leaseMs` ahead, so other replicas' passes skip them meanwhile (and rows
 * another claim is taking are skipped, not waited for). The pass then reschedules or settles each.
 * One statement: the CTE picks and locks, the UPDATE claims and returns them joined to providers.
 */
export function claimDueUnsettledPlacements(db: Queries, limit: number, leaseMs: number) {
  return (
    db
      .with("due", (qb) =>
        qb
          .selectFrom("unsettledPlacements")
          .select("id")
          // `settled_at IS NULL` as the partial index on next_check_at says it.
          .where("settledAt", "is", null)
          .where("nextCheckAt", "<=", sql<Date>`now()`)
          .orderBy("nextCheckAt")
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .updateTable("unsettledPlacements as u")
      .from(["due", "providers"])
      // The database's clock, like the due test above.
      .set({ nextCheckAt: sql<Date>`now() + ${leaseMs}::int * interval '1 millisecond'` })
      .whereRef("u.id", "=", "due.id")
      .whereRef("providers.id", "=", "u.providerId")
      .returning(["u.id", "u.operationId", "u.providerId", "u.type", "u.checks", PROVIDER_JSON.as("provider")])
      .execute()
  );
}

export type UnsettledPlacementRow = Awaited<ReturnType<typeof claimDueUnsettledPlacements>>[number];

/** Records a check that settled nothing; the next one is due at `nextCheckAt`. */
export async function rescheduleUnsettledPlacement(db: Queries, id: string, checks: number, nextCheckAt: Date): Promise<void> {
  await db.updateTable("unsettledPlacements").set({ checks, nextCheckAt }).where("id", "=", id).execute();
}

/** Settles a placement with what became of it. */
export async function settleUnsettledPlacement(db: Queries, id: string, checks: number, outcome: string): Promise<void> {
  await db.updateTable("unsettledPlacements").set({ checks, outcome, settledAt: new Date() }).where("id", "=", id).execute();
}
