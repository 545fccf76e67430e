import { NotifiedCache, type Currency, type SqlClient } from "@pgw/kit";
import type { OperationKind, Tariff } from "../domain/tariff";
import { findTariff } from "./accounts";

/** Notified at commit by every change to the tariffs table (its trigger, migration 20261126120000_tariffs_notify). */
export const TARIFFS_CHANNEL = "ledger_tariffs";

/** The tariff a quote applies (the shop's own, else the default), or null when neither exists. */
export type TariffLookup = (shopId: string, type: OperationKind, method: string, currency: Currency) => Promise<Tariff | null>;

/** Tariffs read from the database each time: Reserve's, which moves money on what it reads. */
export const storedTariffs =
  (db: SqlClient): TariffLookup =>
  (shopId, type, method, currency) =>
    findTariff(db, shopId, type, method, currency);

/**
 * Quote's tariffs, kept in the process: every payment create asks for a quote, and tariffs change
 * only by hand. The cache listens on {@link TARIFFS_CHANNEL} (`NotifiedCache.listen`).
 */
export function cachedTariffs(db: SqlClient, cache: NotifiedCache<string, Tariff | null>): TariffLookup {
  const stored = storedTariffs(db);
  return (shopId, type, method, currency) => cache.get(`${shopId} ${type} ${method} ${currency}`, () => stored(shopId, type, method, currency));
}
