/**
 * Reading the accounts: a shop's balances with their journal sums (GetBalances), and every account
 * and entry against the whole journal (Reconcile). Writes are journal.ts's.
 */
import type { Money } from "@pgw/contracts";
import { sql } from "kysely";
import { jsonBuildObject } from "kysely/helpers/postgres";
import type { AccountReading } from "../domain/balances";
import type { Db } from "./index";

/**
 * The shop's available and reserved accounts with their journal sums, in one statement: one
 * snapshot (a statement sees one snapshot even under READ COMMITTED, as a REPEATABLE READ
 * transaction would) and one round trip. The journal sum of an account is the running sum its
 * latest posting carries (balance_after), one probe of postings(account_id, id) whatever the
 * account's history; adding up every posting instead grows with it (about 15 ms at 100,000
 * postings), and is what Reconcile does, chain included.
 */
export function readShopAccounts(db: Db, shopId: string): Promise<AccountReading[]> {
  return db
    .selectFrom("accounts as a")
    .select((eb) => [
      "a.kind",
      "a.currency",
      "a.balance",
      eb.fn
        .coalesce(
          // LIMIT 1 as a literal, as it was: the statement is prepared, and a generic plan would not know a parameter's value.
          eb.selectFrom("postings as p").select("p.balanceAfter").whereRef("p.accountId", "=", "a.id").orderBy("p.id", "desc").limit(sql.lit(1)),
          sql<Money>`0`,
        )
        .as("journal"),
    ])
    .where("a.shopId", "=", shopId)
    .where("a.kind", "in", ["available", "reserved"])
    .$narrowType<{ kind: AccountReading["kind"] }>()
    .execute();
}

/**
 * Every account against its whole journal, and every entry's sums, each read in one statement:
 * the number of accounts checked, the accounts whose materialised balance differs from the sum of
 * their postings or whose postings' running sums (balance_after) are not the sums of the postings
 * up to them (`brokenChainAt`: the first such posting), and the entries whose postings do not sum
 * to zero in some currency. Amounts are decimal strings.
 */
export async function reconcileAccounts(db: Db) {
  const { checked, mismatches } = await db
    .with("r", (q) =>
      q.selectFrom("postings").select((eb) => ["accountId", "id", "balanceAfter", eb.fn.sum("amount").over((o) => o.partitionBy("accountId").orderBy("id")).$castTo<Money>().as("running")]),
    )
    .with("j", (q) =>
      q
        .selectFrom((s) => s.selectFrom("r").selectAll("r").select((eb) => eb.fn.max("id").over((o) => o.partitionBy("accountId")).as("lastId")).as("x"))
        .select((eb) => [
          "accountId",
          eb.fn.max("running").filterWhereRef("id", "=", "lastId").as("total"),
          eb.fn.min("id").filterWhereRef("balanceAfter", "<>", "running").as("brokenAt"),
        ])
        .groupBy("accountId"),
    )
    .with("c", (q) =>
      q
        .selectFrom("accounts as a")
        .leftJoin("j", "j.accountId", "a.id")
        .select((eb) => ["a.id", "a.shopId", "a.kind", "a.currency", "a.balance", eb.fn.coalesce("j.total", sql<Money>`0`).as("journal"), "j.brokenAt"]),
    )
    .selectFrom("c")
    .select((eb) => [
      eb.cast<number>(eb.fn.countAll(), "integer").as("checked"),
      eb.fn
        .jsonAgg(
          jsonBuildObject({
            accountId: eb.ref("c.id"),
            shopId: eb.ref("c.shopId"),
            kind: eb.ref("c.kind"),
            currency: eb.ref("c.currency"),
            balance: eb.cast<string>("c.balance", "text"),
            journal: eb.cast<string>("c.journal", "text"),
            brokenChainAt: eb.cast<string | null>("c.brokenAt", "text"),
          }),
        )
        .filterWhere((w) => w.or([w("c.balance", "<>", w.ref("c.journal")), w("c.brokenAt", "is not", null)]))
        .as("mismatches"),
    ])
    .executeTakeFirstOrThrow();
  const unbalanced = await db
    .selectFrom("postings")
    .select((eb) => ["entryId", "currency", eb.cast<string>(eb.fn.sum("amount"), "text").as("sum")])
    .groupBy(["entryId", "currency"])
    .having((eb) => eb.fn.sum("amount"), "<>", sql.lit(0))
    .execute();
  return { checked, mismatches: mismatches ?? [], unbalanced };
}

/** An account Reconcile found to differ from its journal, or whose running balances are broken. */
export type AccountMismatch = Awaited<ReturnType<typeof reconcileAccounts>>["mismatches"][number];

/** A journal entry whose postings do not sum to zero in some currency. */
export type UnbalancedEntry = Awaited<ReturnType<typeof reconcileAccounts>>["unbalanced"][number];
