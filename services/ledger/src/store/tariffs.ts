/**
 * Commission tariffs: read from the table each time (Reserve, which moves money on them), or
 * through the process's cache (Quote). Tariffs have no API: they change by SQL, and a
 * statement-level trigger on the table notifies {@link TARIFFS_CHANNEL} at every change.
 */
import type { Currency, OperationKind, Tariff } from "@pgw/contracts";
import type { NotifiedCache } from "@pgw/kit/db";
import type { Db } from "./index";

/** Notified at commit by every change to the tariffs table (its trigger, migration 20261126120000_tariffs_notify). */
export const TARIFFS_CHANNEL = "ledger_tariffs";

/** The tariff a quote applies (the shop's own, else the default), or null when neither exists. */
export type TariffLookup = (shopId: string, type: OperationKind, method: string, currency: Currency) => Promise<Tariff | null>;

/** The shop's own tariff, else the default one (shop_id NULL); null when neither exists. */
export async function findTariff(db: Db, shopId: string, type: OperationKind, method: string, currency: Currency): Promise<Tariff | null> {
  const row = await db
    .selectFrom("tariffs")
    .select(["percent", "fixed", "minimum"])
    .where((eb) => eb.or([eb("shopId", "=", shopId), eb("shopId", "is", null)]))
    .where("type", "=", type)
    .where("method", "=", method)
    .where("currency", "=", currency)
    .orderBy("shopId", (o) => o.asc().nullsLast())
    .limit(1)
    .executeTakeFirst();
  return row ?? null;
}

/** Tariffs read from the database each time: Reserve's, which moves money on what it reads. */
export const storedTariffs =
  (db: Db): TariffLookup =>
  (shopId, type, method, currency) =>
    findTariff(db, shopId, type, method, currency);

/**
 * Quote's tariffs, kept in the process: every payment create asks for a quote, and tariffs change
 * only by hand. The cache keeps nothing until it listens on {@link TARIFFS_CHANNEL}
 * (`NotifiedCache.listen`, started with the unit's background tasks).
 */
export function cachedTariffs(db: Db, cache: NotifiedCache<string, Tariff | null>): TariffLookup {
  const stored = storedTariffs(db);
  return (shopId, type, method, currency) => cache.get(`${shopId} ${type} ${method} ${currency}`, () => stored(shopId, type, method, currency));
}
