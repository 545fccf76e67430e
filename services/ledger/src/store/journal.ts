/**
 * Writing journal entries: the only code that inserts postings or changes a materialised balance.
 */
import { CURRENCY_SCALE, Money, type SqlClient } from "@pgw/kit";
import type Decimal from "decimal.js";
import { randomUUID } from "node:crypto";
import { accountKey, checkEntry, fingerprint, runningBalances, type AccountRef, type EntryDraft, type Posting } from "../domain/journal";

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
 * 2. claims its `source` (unique): when it exists nothing is written and the first entry's id is
 *    returned; a concurrent attempt with the same source waits here for the first to finish;
 * 3. creates missing accounts (INSERT … ON CONFLICT DO NOTHING) and locks all the entry's
 *    accounts with SELECT … FOR UPDATE in account id order, the one order every writer uses,
 *    so writers never deadlock;
 * 4. runs `guard` on the locked balances (it throws to refuse, e.g. insufficient_balance);
 * 5. inserts the postings, each with its account's running balance (balance_after), and sets the
 *    materialised balances to the final ones, in one statement.
 *
 * Throws JournalRuleViolation for a malformed entry and whatever `guard` throws.
 */
export async function postEntry(tx: SqlClient, draft: EntryDraft, guard?: (locked: LockedBalances) => void): Promise<PostedEntry> {
  const postings = checkEntry(draft);
  const print = fingerprint(draft, postings);
  const claimed = await tx.$queryRawUnsafe<{ id: string }[]>(
    `INSERT INTO "journal_entries" ("id", "source", "kind", "shop_id", "reason", "actor", "fingerprint")
     VALUES ($1::uuid, $2, $3, $4::uuid, $5, $6, $7) ON CONFLICT ("source") DO NOTHING RETURNING "id"::text`,
    randomUUID(),
    draft.source,
    draft.kind,
    draft.shopId,
    draft.reason,
    draft.actor,
    print,
  );
  if (claimed.length === 0) {
    const [existing] = await tx.$queryRawUnsafe<{ id: string; fingerprint: string }[]>(
      `SELECT "id"::text, "fingerprint" FROM "journal_entries" WHERE "source" = $1`,
      draft.source,
    );
    return { entryId: existing.id, created: false, sameContent: existing.fingerprint === print };
  }
  const entryId = claimed[0].id;

  const accounts = uniqueAccounts(postings.map((p) => p.account));
  const locked = await lockAccounts(tx, accounts);
  const before = new Map([...locked].map(([key, a]) => [key, a.balance]));
  guard?.(before);

  const { after, final } = runningBalances(before, postings);
  const idOf = (key: string) => locked.get(key)!.id;
  const fixed = (amount: Decimal, p: Posting) => amount.toFixed(CURRENCY_SCALE[p.account.currency]);
  await tx.$executeRawUnsafe(
    `WITH p AS (
       INSERT INTO "postings" ("entry_id", "account_id", "currency", "amount", "balance_after")
       SELECT $1::uuid, t.account_id, t.currency, t.amount, t.balance_after
       FROM unnest($2::uuid[], $3::text[], $4::numeric[], $5::numeric[]) WITH ORDINALITY AS t(account_id, currency, amount, balance_after, n)
       ORDER BY t.n)
     UPDATE "accounts" a SET "balance" = f.balance, "updated_at" = now()
     FROM unnest($6::uuid[], $7::numeric[]) AS f(account_id, balance) WHERE a."id" = f.account_id`,
    entryId,
    postings.map((p) => idOf(accountKey(p.account))),
    postings.map((p) => p.account.currency),
    postings.map((p) => fixed(p.amount, p)),
    postings.map((p, i) => fixed(after[i], p)),
    [...final.keys()].map(idOf),
    [...final.values()].map((v) => v.toFixed()),
  );
  return { entryId, created: true, sameContent: true };
}

function uniqueAccounts(refs: AccountRef[]): AccountRef[] {
  const byKey = new Map(refs.map((r) => [accountKey(r), r]));
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/**
 * Creates the accounts that do not exist yet (in key order, so two creators never wait on each
 * other crosswise), then locks all of them in id order. Resolves to id and balance by account key.
 */
async function lockAccounts(tx: SqlClient, accounts: AccountRef[]): Promise<Map<string, { id: string; balance: Decimal }>> {
  const columns = [accounts.map((a) => a.shopId), accounts.map((a) => a.kind), accounts.map((a) => a.currency)];
  await tx.$executeRawUnsafe(
    `INSERT INTO "accounts" ("id", "shop_id", "kind", "currency")
     SELECT gen_random_uuid(), t.shop_id, t.kind, t.currency FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS t(shop_id, kind, currency, n)
     ORDER BY t.n ON CONFLICT ("shop_id", "kind", "currency") DO NOTHING`,
    ...columns,
  );
  const rows = await tx.$queryRawUnsafe<{ id: string; shop_id: string; kind: string; currency: string; balance: string }[]>(
    `SELECT a."id"::text, a."shop_id"::text, a."kind", a."currency", a."balance"::text FROM "accounts" a
     JOIN unnest($1::uuid[], $2::text[], $3::text[]) AS t(shop_id, kind, currency)
       ON a."shop_id" = t.shop_id AND a."kind" = t.kind AND a."currency" = t.currency
     ORDER BY a."id" FOR UPDATE OF a`,
    ...columns,
  );
  const locked = new Map(rows.map((r) => [`${r.shop_id}|${r.kind}|${r.currency}`, { id: r.id, balance: new Money(r.balance) }]));
  const missing = accounts.filter((a) => !locked.has(accountKey(a)));
  if (missing.length) throw new Error(`accounts not found after creation: ${missing.map(accountKey).join(", ")}`);
  return locked;
}
