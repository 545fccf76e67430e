/**
 * Writing journal entries: the only code that inserts postings or changes a materialised balance.
 *
 * An entry's rows go to Postgres as one array parameter per column, turned into rows by `unnest`
 * (WITH ORDINALITY where their order matters): a statement's text, and so its prepared plan, stays
 * the same whatever the number of postings. Kysely's builder has no unnest, so these are `sql`
 * fragments, the casts giving the arrays their types.
 */
import { formatAmount } from "@pgw/contracts";
import type Decimal from "decimal.js";
import { sql } from "kysely";
import { randomUUID } from "node:crypto";
import { accountKey, checkEntry, fingerprint, runningBalances, type AccountRef, type EntryDraft } from "../domain/journal";
import type { Tx } from "./index";
import { countEntryPosted } from "../metrics";

/** The outcome of {@link postEntry}. */
export interface PostedEntry {
  entryId: string;
  /** False when an entry with this source existed: nothing was written. */
  created: boolean;
  /** With created = false: whether the existing entry says the same as this draft. */
  sameContent: boolean;
}

/** Balances of the entry's accounts as locked, before the entry, by {@link accountKey}. */
export type LockedBalances = ReadonlyMap<string, Decimal>;

/**
 * Appends an entry inside the caller's transaction `tx` (READ COMMITTED):
 *
 * 1. checks it (postings sum to zero per currency, amounts exact at the currency scale);
 * 2. claims its `source` (unique) and, when it was free, creates the entry's missing accounts
 *    (INSERT … ON CONFLICT DO NOTHING, in key order), in one statement: the claim comes first,
 *    since the accounts' insert reads it. When the source exists nothing is written and the first
 *    entry's id is returned; a concurrent attempt with the same source waits here for the first to
 *    finish;
 * 3. locks all the entry's accounts with SELECT … FOR UPDATE in account id order, the one order
 *    every writer uses, so writers never deadlock;
 * 4. runs `guard` on the locked balances (it throws to refuse, e.g. insufficient_balance);
 * 5. inserts the postings, each with its account's running balance (balance_after), and sets the
 *    materialised balances to the final ones, in one statement.
 *
 * Throws JournalRuleViolation for a malformed entry and whatever `guard` throws.
 */
export async function postEntry(tx: Tx, draft: EntryDraft, guard?: (locked: LockedBalances) => void): Promise<PostedEntry> {
  const postings = checkEntry(draft);
  const print = fingerprint(draft, postings);
  const accounts = uniqueAccounts(postings.map((p) => p.account));
  const claimed = await claimSource(tx, draft, print, accounts);
  if (!claimed) {
    const existing = await tx.selectFrom("journalEntries").select(["id", "fingerprint"]).where("source", "=", draft.source).executeTakeFirstOrThrow();
    return { entryId: existing.id, created: false, sameContent: existing.fingerprint === print };
  }
  const entryId = claimed.id;
  countEntryPosted(tx, draft.kind);

  const locked = await lockAccounts(tx, accounts);
  const before = new Map([...locked].map(([key, a]) => [key, a.balance]));
  guard?.(before);

  const { after, final } = runningBalances(before, postings);
  const idOf = (key: string) => locked.get(key)!.id;
  // NUMERIC is written as decimal strings at each account's currency scale.
  const currencyOf = new Map(accounts.map((a) => [accountKey(a), a.currency]));
  const posted = {
    accountIds: postings.map((p) => idOf(accountKey(p.account))),
    currencies: postings.map((p) => p.account.currency),
    amounts: postings.map((p) => formatAmount(p.amount, p.account.currency)),
    balancesAfter: postings.map((p, i) => formatAmount(after[i], p.account.currency)),
  };
  const written = sql<{ accountId: string; currency: string; amount: string; balanceAfter: string; n: bigint }>`unnest(${posted.accountIds}::uuid[], ${posted.currencies}::text[], ${posted.amounts}::numeric[], ${posted.balancesAfter}::numeric[]) WITH ORDINALITY`;
  const finalIds = [...final.keys()].map(idOf);
  const finalBalances = [...final].map(([key, balance]) => formatAmount(balance, currencyOf.get(key)!));
  const balances = sql<{ accountId: string; balance: string }>`unnest(${finalIds}::uuid[], ${finalBalances}::numeric[])`;
  // One statement, one round trip: the postings (in the entry's order, so their ids follow it) and the new balances.
  await tx
    .with("p", (q) =>
      q
        .insertInto("postings")
        .columns(["entryId", "accountId", "currency", "amount", "balanceAfter"])
        .expression(
          q
            .selectFrom(written.as<"t">(sql`t(account_id, currency, amount, balance_after, n)`))
            .select([sql<string>`${entryId}::uuid`.as("entryId"), "t.accountId", "t.currency", "t.amount", "t.balanceAfter"])
            .orderBy("t.n"),
        ),
    )
    .updateTable("accounts as a")
    .from(balances.as<"f">(sql`f(account_id, balance)`))
    .set((eb) => ({ balance: eb.ref("f.balance"), updatedAt: sql`now()` }))
    .whereRef("a.id", "=", "f.accountId")
    .execute();
  return { entryId, created: true, sameContent: true };
}

function uniqueAccounts(refs: AccountRef[]): AccountRef[] {
  const byKey = new Map(refs.map((r) => [accountKey(r), r]));
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/** The accounts as rows of (shop_id, kind, currency), for statements to join or insert. */
const accountRows = (accounts: AccountRef[]) =>
  sql<{ shopId: string; kind: string; currency: string }>`unnest(${accounts.map((a) => a.shopId)}::uuid[], ${accounts.map((a) => a.kind)}::text[], ${accounts.map((a) => a.currency)}::text[])`;

/**
 * Claims the entry's source and, only when this claimed it, creates those of `accounts` that do
 * not exist yet, in key order (so two creators never wait on each other crosswise): one statement.
 * Resolves to the new entry's id; undefined when the source was claimed before.
 */
function claimSource(tx: Tx, draft: EntryDraft, print: string, accounts: AccountRef[]) {
  return tx
    .with("entry", (q) =>
      q
        .insertInto("journalEntries")
        .values({ id: randomUUID(), source: draft.source, kind: draft.kind, shopId: draft.shopId, reason: draft.reason, actor: draft.actor, fingerprint: print })
        .onConflict((oc) => oc.column("source").doNothing())
        .returning("id"),
    )
    .with("created", (q) =>
      q
        .insertInto("accounts")
        .columns(["id", "shopId", "kind", "currency"])
        .expression((eb) =>
          eb
            .selectFrom(sql<{ shopId: string; kind: string; currency: string; n: bigint }>`${accountRows(accounts)} WITH ORDINALITY`.as<"t">(sql`t(shop_id, kind, currency, n)`))
            .select([sql<string>`gen_random_uuid()`.as("id"), "t.shopId", "t.kind", "t.currency"])
            .where((w) => w.exists(w.selectFrom("entry").select("entry.id")))
            .orderBy("t.n"),
        )
        .onConflict((oc) => oc.columns(["shopId", "kind", "currency"]).doNothing()),
    )
    .selectFrom("entry")
    .select("entry.id")
    .executeTakeFirst();
}

/** Locks `accounts` (created by {@link claimSource}) in id order. Resolves to id and balance by account key. */
async function lockAccounts(tx: Tx, accounts: AccountRef[]): Promise<Map<string, { id: string; balance: Decimal }>> {
  const rows = await tx
    .selectFrom("accounts as a")
    .innerJoin(accountRows(accounts).as<"t">(sql`t(shop_id, kind, currency)`), (join) =>
      join.onRef("a.shopId", "=", "t.shopId").onRef("a.kind", "=", "t.kind").onRef("a.currency", "=", "t.currency"),
    )
    .select(["a.id", "a.shopId", "a.kind", "a.currency", "a.balance"])
    .orderBy("a.id")
    .forUpdate("a")
    .execute();
  const locked = new Map(rows.map((r) => [accountKey(r), { id: r.id, balance: r.balance }]));
  const missing = accounts.filter((a) => !locked.has(accountKey(a)));
  if (missing.length) throw new Error(`accounts not found after creation: ${missing.map(accountKey).join(", ")}`);
  return locked;
}
