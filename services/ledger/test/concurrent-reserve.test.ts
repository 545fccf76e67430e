import { Money } from "@pgw/contracts";
import { fromConnectError } from "@pgw/kit/rpc";
import { randomUUID } from "node:crypto";
import { balancesOf, outcomeOf, journalViolations, NO_VIOLATIONS, useTestLedger } from "./support";

const ledger = useTestLedger();

describe("100 concurrent payouts against a balance that covers 50", () => {
  it.each([
    ["without overdraft", "0.00", "5075.00"],
    // 50 × 101.50 = 5075.00 = 4575.00 on the balance + 500.00 of overdraft
    ["with an overdraft limit", "500.00", "4575.00"],
  ])("%s: exactly 50 succeed and the balance never passes the limit", async (_, overdraftLimit, funding) => {
    const shopId = randomUUID();
    await ledger.client.adjust({ shopId, currency: "RUB", amount: funding, reason: "funding", actor: "test", idempotencyKey: randomUUID() });
    const floor = new Money(overdraftLimit).neg();

    // watch the balance while the payouts race; a read the busy ledger could not serve in time shows nothing
    let racing = true;
    const seen: string[] = [];
    const watcher = (async () => {
      while (racing) {
        const balance = await balancesOf(ledger, shopId).then(
          (b) => b.RUB.balance,
          (err: unknown) => {
            if (fromConnectError(err).code !== "unavailable") throw err;
            return undefined;
          },
        );
        if (balance !== undefined) seen.push(balance);
      }
    })();

    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        outcomeOf(
          ledger.client.reserve({ shopId, operationId: randomUUID(), method: "WT_RUB_C2C", amount: "100.00", currency: "RUB", settlementCurrency: "RUB", overdraftLimit }),
          (r) => r.reservedAmount,
        ),
      ),
    );
    racing = false;
    await watcher;

    const tally = results.reduce<Record<string, number>>((t, r) => ({ ...t, [r]: (t[r] ?? 0) + 1 }), {});
    expect(tally).toEqual({ "101.50": 50, insufficient_balance: 50 });
    expect((await balancesOf(ledger, shopId)).RUB).toEqual({ balance: floor.toFixed(2), currentMinus: "0.00", reserved: "5075.00" });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((b) => new Money(b).lt(floor))).toEqual([]);
    expect(await journalViolations(ledger.db)).toEqual(NO_VIOLATIONS);
  });
});
