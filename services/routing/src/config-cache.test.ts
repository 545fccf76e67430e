import type { SqlClient } from "@pgw/kit";
import { cachedProviderByCode } from "./config-cache";
import type { Sql } from "./store";

/** A database answering the provider lookup from a map, counting the lookups per code. */
function providersTable(rows: Record<string, object>) {
  const lookups = new Map<string, number>();
  const sql = {
    $queryRawUnsafe: async (_query: string, code: string) => {
      lookups.set(code, (lookups.get(code) ?? 0) + 1);
      return rows[code] ? [rows[code]] : [];
    },
    $executeRawUnsafe: async () => 0,
    $transaction: async <R>(fn: (tx: SqlClient) => Promise<R>) => fn(sql as unknown as SqlClient),
  };
  return { sql: sql as unknown as Sql, lookups };
}

test("a provider found is kept for the TTL; a code that finds nothing is asked again, never kept", async () => {
  const { sql, lookups } = providersTable({ sbx: { id: "p1", code: "sbx" } });
  const byCode = cachedProviderByCode(sql, 60_000);
  expect(await byCode("sbx")).toMatchObject({ code: "sbx" });
  expect(await byCode("sbx")).toMatchObject({ code: "sbx" });
  expect(lookups.get("sbx")).toBe(1);
  expect(await byCode("nope")).toBeNull();
  expect(await byCode("nope")).toBeNull();
  expect(lookups.get("nope")).toBe(2);
});
