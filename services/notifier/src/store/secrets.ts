/**
 * Signing secrets per shop, stored sealed under the data keys (SEALED_COLUMNS): sealed here on the
 * way in, answered as stored, and opened by the worker to sign.
 */
import type { DataKeys } from "@pgw/kit/db";
import { randomUUID } from "node:crypto";
import { generateSecret, ROTATION_OVERLAP_MS } from "../domain/signing";
import { advisoryLock, now, nowPlusMs, type NotifierDb, type NotifierTx } from "./db";

/** Serialises the transactions that make a shop's current secret (first need, rotation). */
const lockShopSecrets = (tx: NotifierTx, shopId: string) => advisoryLock(tx, `pgw-notifier-secret:${shopId}`, "exclusive");

/**
 * Secrets that sign now, per shop, newest first, as stored (sealed): the current one and those
 * rotated out less than the overlap ago. A shop created through the admin API got its first secret there (shown in the
 * creation response); one without a current secret (the notifier was unreachable then) gets one
 * here, which the merchant learns only by rotating it through the admin API.
 */
export async function signingSecrets(db: NotifierDb, keys: DataKeys, shopIds: string[]): Promise<Map<string, string[]>> {
  const read = () =>
    db
      .selectFrom("webhookSecrets")
      .select(["shopId", "secret", "expiresAt"])
      .where((eb) => eb.and([eb("shopId", "=", eb.fn.any(eb.val(shopIds))), eb.or([eb("expiresAt", "is", null), eb("expiresAt", ">", now())])]))
      .orderBy("createdAt", "desc")
      .orderBy("id")
      .execute();
  let rows = await read();
  const withCurrent = new Set(rows.filter((r) => r.expiresAt === null).map((r) => r.shopId));
  const missing = shopIds.filter((s) => !withCurrent.has(s));
  if (missing.length > 0) {
    for (const shopId of missing) {
      await db.$transaction(async (tx) => {
        await lockShopSecrets(tx, shopId);
        await tx
          .insertInto("webhookSecrets")
          .values({ id: randomUUID(), shopId, secret: keys.seal(generateSecret()) })
          .onConflict((oc) => oc.doNothing())
          .execute();
      });
    }
    rows = await read();
  }
  const byShop = new Map<string, string[]>();
  for (const r of rows) byShop.set(r.shopId, [...(byShop.get(r.shopId) ?? []), r.secret]);
  return byShop;
}

/**
 * Makes a new current secret for the shop and returns it. Every secret that signed until now keeps
 * signing for the overlap (24 h), so receivers can switch without dropping a message.
 */
export async function rotateSecret(db: NotifierDb, keys: DataKeys, shopId: string): Promise<string> {
  const secret = generateSecret();
  await db.$transaction(async (tx) => {
    await lockShopSecrets(tx, shopId);
    await tx.updateTable("webhookSecrets").set({ expiresAt: nowPlusMs(ROTATION_OVERLAP_MS) }).where("shopId", "=", shopId).where("expiresAt", "is", null).execute();
    await tx.insertInto("webhookSecrets").values({ id: randomUUID(), shopId, secret: keys.seal(secret) }).execute();
  });
  return secret;
}
