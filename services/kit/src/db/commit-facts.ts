import type { PgDb, PgTx } from "./pg-db";

/**
 * Tells this process's listener of `channel` (`PgDb.onCommit`) about `fact` once the work that
 * produced it is committed: at the commit of transaction `db`, never if it rolls back; at once when
 * `db` is the pool itself (a statement that committed on its own). Without a listener nothing
 * happens: a unit's metrics count committed business facts this way (operations created, journal
 * entries), so a rolled-back attempt is never counted.
 */
export function afterCommit(db: PgDb<any> | PgTx<any>, channel: string, fact: unknown): void {
  if ("wakeOnCommit" in db) db.wakeOnCommit(channel, fact);
  else db.announceCommitted(channel, [fact]);
}
