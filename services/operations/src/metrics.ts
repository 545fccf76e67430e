/**
 * The operations unit's business metrics: operations created and reaching a terminal status, late
 * funds opened (counted once their transaction commits: kit `afterCommit`), and the queues people
 * work through (manual checks, open late funds), read at each scrape. Labels are the operation's
 * type and status, never an id.
 */
import { afterCommit } from "@pgw/kit/db";
import { scrapedGauge } from "@pgw/kit/runtime";
import { Counter, type Registry } from "prom-client";
import { TERMINAL, type Status } from "./domain/lifecycle";
import { countManualChecks, countOpenLateFunds, type OperationRow, type Sql, type Tx } from "./store";

const STATUS_CHANGED = "operations_metrics_status_changed";
const LATE_FUNDS_OPENED = "operations_metrics_late_funds_opened";

interface StatusChange {
  type: string;
  status: string;
  previous: string;
}

/** Counts `row`'s change from `previous` once `db`'s work commits (every status change calls this beside its event). */
export function countStatusChange(db: Sql | Tx, row: OperationRow, previous: string): void {
  afterCommit(db, STATUS_CHANGED, { type: row.type, status: row.status, previous } satisfies StatusChange);
}

/** Counts late funds recorded for `row` once `tx` commits. */
export function countLateFundsOpened(tx: Tx, row: OperationRow): void {
  afterCommit(tx, LATE_FUNDS_OPENED, { type: row.type });
}

/** Registers the unit's metrics on `registry`, counting what commits on `sql`. */
export function registerOperationsMetrics(registry: Registry, sql: Sql): void {
  const created = new Counter({ name: "operations_created_total", help: "Operations created (left the internal creating state), by type", labelNames: ["type"], registers: [registry] });
  const terminal = new Counter({ name: "operations_terminal_total", help: "Operations that reached a terminal status, by type and status", labelNames: ["type", "status"], registers: [registry] });
  const lateFunds = new Counter({ name: "operations_late_funds_opened_total", help: "Late funds recorded: money reported for an operation that ended without it, by type", labelNames: ["type"], registers: [registry] });
  sql.onCommit<StatusChange>(STATUS_CHANGED, (changes) => {
    for (const { type, status, previous } of changes) {
      if (previous === "creating") created.inc({ type });
      if (TERMINAL.has(status as Status)) terminal.inc({ type, status });
    }
  });
  sql.onCommit<{ type: string }>(LATE_FUNDS_OPENED, (opened) => opened.forEach(({ type }) => lateFunds.inc({ type })));
  scrapedGauge(registry, "operations_manual_check", "Operations waiting for an admin's manual check", () => countManualChecks(sql));
  scrapedGauge(registry, "operations_late_funds_open", "Late funds not yet resolved by an admin", () => countOpenLateFunds(sql));
}
