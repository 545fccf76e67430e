import { Counter, type Registry } from "prom-client";
import type { PgDbOptions } from "./pg-db";

/**
 * The unit's work on Postgres through its pool, as `onStatement` of {@link PgDbOptions} sees it:
 * `db_statements_total{in_transaction}` (every round trip, a transaction's BEGIN and COMMIT
 * included; a statement outside one is a transaction of its own) and `db_transactions_total{outcome}`
 * (those of `$transaction`). Prisma Client's statements (configuration screens) are not counted.
 */
export function countingStatements(registry: Registry): NonNullable<PgDbOptions["onStatement"]> {
  const statements = new Counter({
    name: "db_statements_total",
    help: "Statements sent to Postgres through the unit's pool, BEGIN, COMMIT and ROLLBACK included, by whether they ran in a transaction",
    labelNames: ["in_transaction"],
    registers: [registry],
  });
  const [inTransactions, alone] = [statements.labels("true"), statements.labels("false")];
  const transactions = new Counter({ name: "db_transactions_total", help: "Transactions the unit ended, by outcome", labelNames: ["outcome"], registers: [registry] });
  const committed = transactions.labels("committed");
  const rolledBack = transactions.labels("rolled_back");
  return (sql, inTransaction) => {
    if (!inTransaction) return alone.inc();
    inTransactions.inc();
    if (sql === "COMMIT") committed.inc();
    else if (sql === "ROLLBACK") rolledBack.inc();
  };
}
