/**
 * Endpoints: each shop's webhook URL (a copy, from shop_changed) and whether a 410 disabled it, and
 * the endpoint lock that orders URL changes against the transactions deciding whether a delivery
 * waits for a URL.
 */
import { advisoryLock, now, statusLit, wakeWorkerOnCommit, type NotifierSql, type NotifierTx } from "./db";

/**
 * Orders, per shop, a URL change against the transactions that decide whether a delivery waits for
 * a URL (new delivery, parking): a URL change takes the shop's lock exclusively, the others share
 * it (they never wait for each other). Without it a URL committed while a delivery is being
 * inserted could leave that delivery waiting. The key is the text 'pgw-notifier-endpoint:<shop id>'
 * hashed by Postgres, as every replica computes it.
 */
export const lockShopEndpoint = (tx: NotifierTx, shopId: string, mode: "shared" | "exclusive") => advisoryLock(tx, `pgw-notifier-endpoint:${shopId}`, mode);

/**
 * Applies a shop's webhook URL from a shop_changed event (inside the consumer's transaction). An
 * event older than the one applied last is ignored. A changed URL re-enables an endpoint disabled
 * by 410 and resumes the deliveries parked meanwhile. Deliveries waiting for a URL are scheduled
 * now once the shop has one.
 */
export async function applyShopWebhookUrl(tx: NotifierTx, shopId: string, url: string | null, occurredAt: Date): Promise<void> {
  await lockShopEndpoint(tx, shopId, "exclusive");
  const current = await tx.selectFrom("endpoints").select(["url", "settingsAt"]).where("shopId", "=", shopId).forUpdate().executeTakeFirst();
  if (!current) {
    const inserted = await tx.insertInto("endpoints").values({ shopId, url, settingsAt: occurredAt }).onConflict((oc) => oc.doNothing()).executeTakeFirst();
    // Another replica inserted it meanwhile: roll back; the consumer retries and takes the update path.
    if (!inserted.numInsertedOrUpdatedRows) throw new Error(`endpoint of shop ${shopId} created concurrently; retrying`);
  } else {
    if (current.settingsAt.getTime() > occurredAt.getTime()) return;
    await tx
      .updateTable("endpoints")
      .set({ url, settingsAt: occurredAt, updatedAt: now(), ...(current.url !== url ? { disabled: false, disabledAt: null } : {}) })
      .where("shopId", "=", shopId)
      .execute();
  }
  if (url === null) return;
  const woken = await tx
    .updateTable("deliveries")
    .set({ nextAttemptAt: now(), updatedAt: now() })
    .where("shopId", "=", shopId)
    .where("status", "=", statusLit("pending"))
    .where("nextAttemptAt", "is", null)
    .executeTakeFirst();
  const resumed = current && current.url !== url ? await resumeDisabledDeliveries(tx, shopId) : 0;
  if (Number(woken.numUpdatedRows) + resumed > 0) wakeWorkerOnCommit(tx);
}

/**
 * Deliveries parked while the shop's endpoint was disabled (by a 410), and the one that got the
 * 410, become due again with a fresh schedule: the endpoint is enabled again (a new URL, or an
 * admin's redelivery), and at least once means what was parked still goes out. Resolves to how many.
 */
export async function resumeDisabledDeliveries(db: NotifierSql, shopId: string): Promise<number> {
  const { numUpdatedRows } = await db
    .updateTable("deliveries")
    .set({ status: statusLit("pending"), roundAttempts: 0, nextAttemptAt: now(), updatedAt: now() })
    .where("shopId", "=", shopId)
    .where("status", "=", statusLit("disabled"))
    .executeTakeFirst();
  return Number(numUpdatedRows);
}

/** Enables the shop's endpoint again when a 410 had disabled it; resolves to whether it was disabled. */
export async function reenableEndpoint(db: NotifierSql, shopId: string): Promise<boolean> {
  const { numUpdatedRows } = await db
    .updateTable("endpoints")
    .set({ disabled: false, disabledAt: null, updatedAt: now() })
    .where("shopId", "=", shopId)
    .where("disabled", "=", true)
    .executeTakeFirst();
  return numUpdatedRows > 0n;
}
