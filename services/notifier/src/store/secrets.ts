/**
 * Signing secrets per shop, stored sealed under the data keys (SEALED_COLUMNS): sealed here on the
 * way in, answered as stored, and opened by the worker to sign. The worker's claim reads them with
 * the deliveries it takes ({@link signingSecretsOf}), so every attempt signs with the secrets as
 * they were when it was claimed, whichever replica rotated them: no copy is kept in the process.
 */
import type { DataKeys } from "@pgw/kit/db";
import { expressionBuilder, sql, type Expression, type ExpressionBuilder } from "kysely";
import { randomUUID } from "node:crypto";
import type { DB } from "../generated/kysely/database";
import { generateSecret, ROTATION_OVERLAP_MS } from "../domain/signing";
import { advisoryLock, now, nowPlusMs, type NotifierDb, type NotifierTx } from "./db";

/** A secret that signs now: the shop's current one, or one rotated out less than the overlap ago. */
const signsNow = (eb: ExpressionBuilder<DB, "webhookSecrets">) => eb.or([eb("expiresAt", "is", null), eb("expiresAt", ">", now())]);

/**
 * The secrets that sign now for the shop `shopId` names, newest first, as stored (sealed): an
 * array, empty while the shop has none yet (see {@link signingSecrets}).
 */
export function signingSecretsOf(shopId: Expression<string>) {
  const secrets = expressionBuilder<DB>()
    .selectFrom("webhookSecrets")
    .select("secret")
    .where((w) => w.and([w("shopId", "=", shopId), signsNow(w)]))
    .orderBy("createdAt", "desc")
    .orderBy("id");
  return sql<string[]>`array(${secrets})`;
}

/** Serialises the transactions that make a shop's current secret (first need, rotation). */
const lockShopSecrets = (tx: NotifierTx, shopId: string) => advisoryLock(tx, `pgw-notifier-secret:${shopId}`, "exclusive");

/**
 * Secrets that sign now, per shop, newest first, as stored (sealed): the current one and those
 * rotated out less than the overlap ago. A shop created through the admin API got its first secret there (shown in the
 * creation response); one without a current secret (the notifier was unreachable then) gets one
 * here, which the merchant learns only by rotating it through the admin API. The worker asks only
 * for the shops its claim found without a secret.
 */
export async function signingSecrets(db: NotifierDb, keys: DataKeys, shopIds: string[]): Promise<Map<string, string[]>> {
  const read = () =>
    db
      .selectFrom("webhookSecrets")
      .select(["shopId", "secret", "expiresAt"])
      .where((eb) => eb.and([eb("shopId", "=", eb.fn.any(eb.val(shopIds))), signsNow(eb)]))
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
