/** FX rates per (source, base, quote): read by conversions, seeded at start. */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import type { Queries } from "./index";

/** The newest rate base → quote over every source. */
export function latestFxRate(db: Queries, base: string, quote: string) {
  return db
    .selectFrom("fxRates")
    .select(["source", "rate"])
    .where("baseCurrency", "=", base)
    .where("quoteCurrency", "=", quote)
    .orderBy("createdAt", "desc")
    .orderBy("id", "asc")
    .limit(sql.lit(1))
    .executeTakeFirst();
}

/** Adds the rates a source lacks (each a decimal string); existing rates are left as operators set them. */
export async function seedFxRates(db: Queries, source: string, rates: readonly { base: string; quote: string; rate: string }[]): Promise<void> {
  await db
    .insertInto("fxRates")
    .values(rates.map((r) => ({ id: randomUUID(), source, baseCurrency: r.base, quoteCurrency: r.quote, rate: r.rate })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}
