import { createClient, createRouterTransport, type Interceptor } from "@connectrpc/connect";
import { ERROR_HTTP_STATUS } from "@pgw/contracts";
import { toConnectError } from "@pgw/kit/rpc";
import { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { sql } from "kysely";
import { randomUUID } from "node:crypto";
import { Registry } from "prom-client";
import { ledgerMetrics } from "../src/metrics";
import { routes } from "../src/routes";
import { storedTariffs } from "../src/store/tariffs";
import { balancesOf, outcomeOf as codeOf, useTestLedger } from "./support";

const ledger = useTestLedger();

/** The same routes in memory, with a logger that keeps its lines and metrics of their own. */
function inMemoryLedger() {
  const lines: { level: string; obj: Record<string, unknown>; msg?: string }[] = [];
  const at = (level: string) => (obj: object, msg?: string) => lines.push({ level, obj: obj as Record<string, unknown>, msg });
  const log = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  // the kit's server maps thrown AppErrors to gRPC codes in an interceptor; the same mapping here
  const mapErrors: Interceptor = (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      throw toConnectError(err);
    }
  };
  const metrics = ledgerMetrics(new Registry());
  const client = createClient(LedgerService, createRouterTransport(routes({ db: ledger.db, log, quoteTariffs: storedTariffs(ledger.db), metrics }), { router: { interceptors: [mapErrors] } }));
  const inconsistencies = async (check: string) => (await metrics.inconsistencies.get()).values.find((v) => v.labels.check === check)?.value ?? 0;
  return { client, alerts: () => lines.filter((l) => l.level === "error" && l.obj.alert), inconsistencies };
}


it("answers ledger_inconsistent (HTTP 500) with an alert when a materialised balance disagrees with the journal; Reconcile reports it and fixes nothing", async () => {
  const shopId = randomUUID();
  await ledger.client.adjust({ shopId, currency: "RUB", amount: "100.00", reason: "funding", actor: "test", idempotencyKey: randomUUID() });
  await ledger.client.reserve({ shopId, operationId: randomUUID(), method: "WT_RUB_C2C", amount: "10.00", currency: "RUB", settlementCurrency: "RUB", overdraftLimit: "0" });
  expect((await balancesOf(ledger, shopId)).RUB).toEqual({ balance: "89.85", currentMinus: "0.00", reserved: "10.15" });
  expect(await ledger.client.reconcile({})).toMatchObject({ mismatches: 0 });

  await ledger.db.updateTable("accounts").set({ balance: sql`"balance" + 0.01` }).where("shopId", "=", shopId).where("kind", "=", "available").execute();

  const code = await codeOf(ledger.client.getBalances({ shopId }));
  expect(code).toBe("ledger_inconsistent");
  expect(ERROR_HTTP_STATUS[code as keyof typeof ERROR_HTTP_STATUS]).toBe(500);
  const mem = inMemoryLedger();
  expect(await codeOf(mem.client.getBalances({ shopId }))).toBe("ledger_inconsistent");
  expect(mem.alerts()).toEqual([
    expect.objectContaining({
      obj: expect.objectContaining({
        alert: "ledger_inconsistent",
        shop_id: shopId,
        inconsistencies: [{ kind: "available", currency: "RUB", balance: "89.86", journal: "89.85", issue: "balance_differs_from_journal" }],
      }),
    }),
  ]);

  expect(await mem.inconsistencies("balances")).toBe(1);

  const report = await mem.client.reconcile({});
  expect(report.mismatches).toBe(1);
  expect(await mem.inconsistencies("reconcile_balance")).toBe(1);
  expect(report.accountsChecked).toBeGreaterThanOrEqual(3); // available, reserved, manual_adjustments
  expect(mem.alerts().filter((a) => a.obj.alert === "ledger_inconsistent" && a.obj.kind === "available")).toHaveLength(1);
  // reported, not repaired
  expect(await codeOf(ledger.client.getBalances({ shopId }))).toBe("ledger_inconsistent");
  // other shops still answer
  expect(await codeOf(ledger.client.getBalances({ shopId: randomUUID() }))).toBe("resolved");
});

it("counts altered postings and running balances in Reconcile, and treats a negative reserve as inconsistent", async () => {
  const shopId = randomUUID();
  await ledger.client.adjust({ shopId, currency: "USDT", amount: "1", reason: "funding", actor: "test", idempotencyKey: randomUUID() });
  const before = (await ledger.client.reconcile({})).mismatches;
  // a posting altered after the fact: its entry no longer sums to zero and its account drifts from the journal
  await ledger.db
    .updateTable("postings")
    .set({ amount: sql`"amount" + 0.000001` })
    .where("id", "=", (eb) => eb.selectFrom("postings as p").innerJoin("accounts as a", "a.id", "p.accountId").select("p.id").where("a.shopId", "=", shopId))
    .execute();
  expect((await ledger.client.reconcile({})).mismatches).toBe(before + 2);

  // a running balance altered: the latest one no longer matches the materialised balance
  const third = randomUUID();
  await ledger.client.adjust({ shopId: third, currency: "RUB", amount: "5.00", reason: "funding", actor: "test", idempotencyKey: randomUUID() });
  await ledger.db
    .updateTable("postings")
    .set({ balanceAfter: sql`"balance_after" + 1` })
    .where("accountId", "=", (eb) => eb.selectFrom("accounts").select("accounts.id").where("accounts.shopId", "=", third).where("accounts.kind", "=", "available"))
    .execute();
  expect(await codeOf(ledger.client.getBalances({ shopId: third }))).toBe("ledger_inconsistent");
  expect((await ledger.client.reconcile({})).mismatches).toBe(before + 3);

  const other = randomUUID();
  await ledger.db.insertInto("accounts").values({ id: randomUUID(), shopId: other, kind: "reserved", currency: "RUB", balance: "-1" }).execute();
  expect(await codeOf(ledger.client.getBalances({ shopId: other }))).toBe("ledger_inconsistent");
});
