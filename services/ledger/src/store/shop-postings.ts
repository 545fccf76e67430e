/** The journal as it touched one shop's own accounts: the console's balance history. */
import type { Db } from "./index";

/** Postings to a shop's available and reserved accounts, newest first, with their entries; one currency or all. */
export function shopPostings(db: Db, shopId: string, currency: string | null, limit: number) {
  return db
    .selectFrom("postings as p")
    .innerJoin("accounts as a", "a.id", "p.accountId")
    .innerJoin("journalEntries as e", "e.id", "p.entryId")
    .select(["e.id as entryId", "e.kind", "e.reason", "e.actor", "e.createdAt", "a.kind as account", "p.currency", "p.amount", "p.balanceAfter"])
    .where("a.shopId", "=", shopId)
    .where("a.kind", "in", ["available", "reserved"])
    .$if(currency !== null, (qb) => qb.where("a.currency", "=", currency!))
    .orderBy("p.id", "desc")
    .limit(limit)
    .execute();
}
