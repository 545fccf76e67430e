import { sql } from "kysely";
import type { Queries } from "./index";

/**
 * Claims the review of an operation's upload for `holder` for `ms`: false while another review, in
 * any replica, holds an unexpired claim. A claim left by a crashed process is taken over once expired.
 * One statement: the insert, or the takeover of an expired claim, answers a row only when it claimed.
 */
export async function claimReview(db: Queries, operationId: string, holder: string, ms: number): Promise<boolean> {
  const claimed = await db
    .insertInto("reviewLeases")
    .values({ operationId, holder, expiresAt: sql<Date>`now() + ${ms}::int * interval '1 millisecond'` })
    .onConflict((oc) =>
      oc
        .column("operationId")
        .doUpdateSet((eb) => ({ holder: eb.ref("excluded.holder"), expiresAt: eb.ref("excluded.expiresAt") }))
        .where("reviewLeases.expiresAt", "<", sql<Date>`now()`),
    )
    .returning(sql<number>`1`.as("claimed"))
    .executeTakeFirst();
  return claimed !== undefined;
}

/** Ends `holder`'s claim on the operation's review (a claim taken over meanwhile stays). */
export async function releaseReview(db: Queries, operationId: string, holder: string): Promise<void> {
  await db.deleteFrom("reviewLeases").where("operationId", "=", operationId).where("holder", "=", holder).execute();
}
