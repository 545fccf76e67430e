/** The checks after a chaos run: each answers a count of misses (0 = the invariant holds) and what it looked at. */
import { Client } from "pg";
import { databaseUrlFor, UNITS } from "../../deploy/local/src/units";
import { call, ok } from "./http";
import type { LoadStats } from "./load";

/** Every service's database but the sandbox's (which has no outbox). */
export const OUTBOX_DATABASES = UNITS.flatMap((u) => (u.database && u.name !== "provider-sandbox" ? [u.database] : []));

export async function withDatabase<T>(serverUrl: string, database: string, use: (db: Client) => Promise<T>): Promise<T> {
  const db = new Client({ connectionString: databaseUrlFor(serverUrl, database) });
  await db.connect();
  try {
    return await use(db);
  } finally {
    await db.end();
  }
}

/** Rows of every unit's outbox not yet published to NATS. */
export async function unpublishedOutbox(serverUrl: string): Promise<number> {
  let total = 0;
  for (const database of OUTBOX_DATABASES) {
    total += await withDatabase(serverUrl, database, async (db) => Number((await db.query("SELECT count(*) AS n FROM outbox WHERE published_at IS NULL")).rows[0].n));
  }
  return total;
}

export interface Invariant {
  name: string;
  checked: number;
  misses: number;
}

export async function checkInvariants(o: { gateway: string; apiKey: string; shopId: string; databaseUrl: string; stats: LoadStats; states: Map<string, any>; completedWebhooks: Set<string> }): Promise<Invariant[]> {
  const { stats, states } = o;
  const headers = { "x-api-key": o.apiKey };
  const created = stats.created;
  const id = (c: (typeof created)[number]) => [...c.operationIds][0];

  const unreadable = created.filter((c) => states.get(id(c))?.operation_id !== id(c) || states.get(id(c))?.type !== c.type).length;
  const stuck = created.filter((c) => c.paid && states.get(id(c))?.status !== "completed").length;
  // Idempotency: each key's answers carried one id, reading by the key finds it, and the
  // operations database holds one row per key.
  let twoOperations = created.filter((c) => c.operationIds.size !== 1).length;
  for (const c of created.filter((c) => c.operationIds.size === 1)) {
    const byKey = await call(`${o.gateway}/v1/get_operation_state`, { headers, body: { merchant_operation_id: c.moid } });
    if (!ok(byKey) || byKey.body.operation_id !== id(c)) twoOperations++;
  }
  twoOperations += await withDatabase(o.databaseUrl, "pgw_operations", async (db) =>
    Number((await db.query("SELECT count(*) AS n FROM (SELECT merchant_operation_id FROM operations WHERE shop_id = $1 GROUP BY merchant_operation_id HAVING count(*) > 1) d", [o.shopId])).rows[0].n),
  );
  // A create that never got a 200 left either nothing or a whole operation that reads back.
  let halfDone = 0;
  for (const moid of stats.abandoned) {
    const byKey = await call(`${o.gateway}/v1/get_operation_state`, { headers, body: { merchant_operation_id: moid } });
    if (!(ok(byKey) && byKey.body.operation_id) && !("status" in byKey && byKey.status === 404)) halfDone++;
  }
  const completed = created.filter((c) => states.get(id(c))?.status === "completed");
  const noWebhook = completed.filter((c) => !o.completedWebhooks.has(id(c))).length;
  const ledger = await withDatabase(o.databaseUrl, "pgw_ledger", async (db) => ({
    entries: Number((await db.query("SELECT count(*) AS n FROM journal_entries")).rows[0].n),
    unbalanced: Number((await db.query("SELECT count(*) AS n FROM (SELECT entry_id FROM postings GROUP BY entry_id, currency HAVING sum(amount) <> 0) u")).rows[0].n),
    accounts: Number((await db.query("SELECT count(*) AS n FROM accounts")).rows[0].n),
    drifted: Number((await db.query("SELECT count(*) AS n FROM accounts a WHERE a.balance <> (SELECT coalesce(sum(p.amount), 0) FROM postings p WHERE p.account_id = a.id)")).rows[0].n),
  }));
  return [
    { name: "created (200) operations readable with the same id", checked: created.length, misses: unreadable },
    { name: "paid operations completed after settling (none stuck)", checked: created.filter((c) => c.paid).length, misses: stuck },
    { name: "idempotency keys with one operation", checked: created.length, misses: twoOperations },
    { name: "abandoned creates with nothing half-done", checked: stats.abandoned.length, misses: halfDone },
    { name: "completed operations with a completed webhook", checked: completed.length, misses: noWebhook },
    { name: "journal entries summing to zero", checked: ledger.entries, misses: ledger.unbalanced },
    { name: "account balances equal to their postings", checked: ledger.accounts, misses: ledger.drifted },
    { name: "outbox rows published (all units)", checked: OUTBOX_DATABASES.length, misses: await unpublishedOutbox(o.databaseUrl) },
  ];
}
