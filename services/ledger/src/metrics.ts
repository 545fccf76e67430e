/**
 * The ledger's business metrics: journal entries posted (counted once their transaction commits:
 * kit `afterCommit`), payout reserves held (read at each scrape), inconsistencies found and orphan
 * reserves released. Labels are an entry's kind or a check's name, never a shop or an operation.
 */
import { afterCommit } from "@pgw/kit/db";
import { scrapedGauge } from "@pgw/kit/runtime";
import { Counter, type Registry } from "prom-client";
import type { EntryKind } from "./domain/journal";
import type { Db, Tx } from "./store";
import { countHeldReserves } from "./store/reserves";

const ENTRY_POSTED = "ledger_metrics_entry_posted";

export interface LedgerMetrics {
  /** Inconsistencies found (each an alert line as well), by check: `balances` (GetBalances' of a shop), `reconcile_balance` and `reconcile_entry` (Reconcile's of every account and entry). */
  inconsistencies: Counter<"check">;
  /** Reserves the orphan sweep released. */
  orphanReservesReleased: Counter;
}

/** Counts an entry of `kind` once `tx` commits (postEntry calls it for every entry it writes). */
export function countEntryPosted(tx: Tx, kind: EntryKind): void {
  afterCommit(tx, ENTRY_POSTED, kind);
}

/** Registers the metrics the ledger's handlers and jobs count. */
export function ledgerMetrics(registry: Registry): LedgerMetrics {
  return {
    inconsistencies: new Counter({ name: "ledger_inconsistencies_total", help: "Ledger inconsistencies found, by check", labelNames: ["check"], registers: [registry] }),
    orphanReservesReleased: new Counter({ name: "ledger_orphan_reserves_released_total", help: "Payout reserves released by the sweep because no payout was behind them", registers: [registry] }),
  };
}

/** Registers the metrics read from the books: entries counted as they commit on `db`, reserves held read at each scrape. */
export function registerBookMetrics(registry: Registry, db: Db): void {
  const entries = new Counter({ name: "ledger_journal_entries_total", help: "Journal entries posted, by kind", labelNames: ["kind"], registers: [registry] });
  db.onCommit<EntryKind>(ENTRY_POSTED, (kinds) => kinds.forEach((kind) => entries.inc({ kind })));
  scrapedGauge(registry, "ledger_reserves_held", "Payout reserves held (created and not yet consumed or released)", () => countHeldReserves(db));
}
