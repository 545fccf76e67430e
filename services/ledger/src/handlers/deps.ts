import type { KitLog } from "@pgw/kit";
import type { Db } from "../store";

/** What every ledger handler works with. */
export interface LedgerDeps {
  db: Db;
  log: KitLog;
}
