import type { ServiceImpl } from "@connectrpc/connect";
import type { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { reconcileAccounts } from "../store/accounts";
import type { LedgerDeps } from "./deps";

/**
 * Reconcile: recomputes every account's balance from the journal and checks that every entry sums
 * to zero per currency. Mismatches are counted and logged as alerts, never fixed here: a fix is
 * a new, reviewed journal entry.
 */
export function reconcileHandlers({ db, log, metrics }: LedgerDeps): Pick<ServiceImpl<typeof LedgerService>, "reconcile"> {
  return {
    async reconcile() {
      const { checked, mismatches, unbalanced } = await reconcileAccounts(db);
      metrics.inconsistencies.inc({ check: "reconcile_balance" }, mismatches.length);
      metrics.inconsistencies.inc({ check: "reconcile_entry" }, unbalanced.length);
      for (const m of mismatches) log.error({ alert: "ledger_inconsistent", ...m }, "account balance differs from its journal");
      for (const e of unbalanced) log.error({ alert: "ledger_unbalanced_entry", ...e }, "journal entry does not sum to zero");
      log.info({ accounts_checked: checked, mismatches: mismatches.length, unbalanced_entries: unbalanced.length }, "reconciliation done");
      return { accountsChecked: checked, mismatches: mismatches.length + unbalanced.length };
    },
  };
}
