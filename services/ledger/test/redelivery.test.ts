/**
 * Redelivering every status event changes nothing.
 *
 * How the redelivery is made: a JetStream redelivery of the same message (same Nats-Msg-Id) is
 * answered by the kit's processed_events row (covered by the kit's consumer tests); publishing
 * the same id again inside the 2-minute window is dropped by JetStream and would prove nothing.
 * So each event is delivered a second time under a fresh Nats-Msg-Id, as a producer that wrote
 * the same fact twice (or republished it after the window) would: the ledger sees a new event id,
 * processed_events does not stop it, and only the journal's unique sources (operation id +
 * transition) and the reserve states stand between it and a double posting.
 */
import { randomUUID } from "node:crypto";
import { SYSTEM_SHOP_ID } from "../src/domain/journal";
import { completedPayment, statusEvent, type OperationFacts, type StatusEvent } from "./fixtures";
import { journalViolations, NO_VIOLATIONS, useTestLedger } from "./support";

const ledger = useTestLedger();

/** Everything the ledger holds for these shops, in a stable order. */
async function state(shops: string[]) {
  const accounts = await ledger.db
    .selectFrom("accounts")
    .select((eb) => ["shopId", "kind", "currency", eb.cast<string>("balance", "text").as("balance")])
    .where("shopId", "in", [...shops, SYSTEM_SHOP_ID])
    .orderBy("shopId")
    .orderBy("kind")
    .orderBy("currency")
    .execute();
  const entries = await ledger.db
    .selectFrom("journalEntries as e")
    .innerJoin("postings as p", "p.entryId", "e.id")
    .select((eb) => ["e.source", eb.cast<number>(eb.fn.count("p.id"), "integer").as("postings")])
    .where("e.shopId", "in", shops)
    .groupBy("e.source")
    .orderBy("e.source")
    .execute();
  const reserves = await ledger.db.selectFrom("reserves").select(["operationId", "status"]).where("shopId", "in", shops).orderBy("operationId").execute();
  return { accounts, entries, reserves };
}

it("posts every fact once, however often its event arrives", async () => {
  const rubShop = randomUUID();
  const usdtShop = randomUUID();
  const shops = [rubShop, usdtShop];
  await ledger.client.adjust({ shopId: rubShop, currency: "RUB", amount: "5000.00", reason: "funding", actor: "test", idempotencyKey: randomUUID() });
  const payouts = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  for (const operationId of payouts) {
    await ledger.client.reserve({ shopId: rubShop, operationId, method: "WT_RUB_C2C", amount: "500.00", currency: "RUB", settlementCurrency: "RUB", overdraftLimit: "0" });
  }
  const payout = { shopId: rubShop, type: "payout" as const, currency: "RUB", expected: "500.00", actualAmount: "0.00", settlementCurrency: "RUB" };
  const facts: OperationFacts[] = [
    completedPayment(rubShop),
    completedPayment(rubShop, { actualAmount: "400.00", settlementAmount: "390.00", commissionAmount: "10.00" }),
    completedPayment(rubShop, { status: "cancelled", actualAmount: "0.00" }),
    completedPayment(rubShop, { status: "awaiting_confirmation", actualAmount: "0.00" }),
    completedPayment(usdtShop, { fxRate: "0.0108", settlementCurrency: "USDT", recordedCurrency: "USDT", recordedAmount: "10.800000", settlementAmount: "10.530000", commissionAmount: "0.270000" }),
    { ...payout, operationId: payouts[0], status: "completed", actualAmount: "500.00", settlementAmount: "507.50", commissionAmount: "7.50" },
    { ...payout, operationId: payouts[1], status: "completed", actualAmount: "200.00", settlementAmount: "203.00", commissionAmount: "3.00" },
    { ...payout, operationId: payouts[2], status: "declined" },
    { ...payout, operationId: payouts[3], status: "expired" },
    { ...payout, operationId: payouts[4], status: "cancelled" },
  ];
  const events: StatusEvent[] = facts.map(statusEvent);
  for (const ev of events) await ledger.deliver(ev);
  const once = await state(shops);
  expect(once.entries).toHaveLength(3 + 1 + 5 + 5); // payments with money, adjustment, reserves, completions/releases
  expect(once.reserves).toEqual(expect.arrayContaining([{ operationId: payouts[0], status: "consumed" }, { operationId: payouts[2], status: "released" }]));

  for (let round = 0; round < 2; round++) {
    for (const ev of events) await ledger.deliver(ev, randomUUID());
    expect(await state(shops)).toEqual(once);
  }
  expect(await journalViolations(ledger.db)).toEqual(NO_VIOLATIONS);
});
