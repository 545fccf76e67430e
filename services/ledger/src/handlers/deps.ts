import type { KitLog } from "@pgw/kit/events";
import type { Db } from "../store";
import type { TariffLookup } from "../store/tariffs";
import type { LedgerMetrics } from "../metrics";

/** What every ledger handler works with. */
export interface LedgerDeps {
  db: Db;
  log: KitLog;
  /** Where Quote finds tariffs (cached in the process: store/tariffs.ts, cachedTariffs). */
  quoteTariffs: TariffLookup;
  metrics: LedgerMetrics;
}
