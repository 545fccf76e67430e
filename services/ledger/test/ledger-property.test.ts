/**
 * Property: whatever sequence of payments (full or partial, with or without conversion),
 * payouts (reserve, complete in full or in part, decline / expire / cancel, release), manual
 * adjustments and event redeliveries runs against the real unit, after every step
 * - every entry's postings sum to zero per currency and every currency sums to zero overall,
 * - every materialised balance equals the sum of its postings, and every posting's running
 *   balance (balance_after) the sum of its account's postings up to it,
 * - reserved ≥ 0 and current_minus = max(−(balance + reserved), 0),
 * - the shop's balances equal a plain model of the flows (docs/architecture.md, Money).
 */
import { CURRENCY_SCALE, formatAmount, Money, type Currency } from "@pgw/contracts";
import type Decimal from "decimal.js";
import fc from "fast-check";
import { randomUUID } from "node:crypto";
import { statusEvent, type OperationFacts, type StatusEvent } from "./fixtures";
import { balancesOf, outcomeOf, journalViolations, NO_VIOLATIONS, useTestLedger } from "./support";

jest.setTimeout(300_000);

const ledger = useTestLedger();

const RATES = ["0.0108", "0.010869565", "0.0123455"];
type ShopKey = "rub" | "usdt";
type Step =
  | { kind: "adjust"; shop: ShopKey; cents: number }
  | { kind: "payment"; shop: ShopKey; cents: number; capturedPct: number; rate: number }
  | { kind: "reserve"; shop: ShopKey; cents: number; overdraftCents: number; rate: number }
  | { kind: "complete"; pick: number; capturedPct: number }
  | { kind: "end"; pick: number; status: "declined" | "expired" | "cancelled" }
  | { kind: "release"; pick: number }
  | { kind: "redeliver"; pick: number };

const shop = fc.constantFrom<ShopKey>("rub", "usdt");
const pct = fc.oneof(fc.constant(100), fc.integer({ min: 1, max: 100 }));
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("adjust" as const), shop, cents: fc.integer({ min: -50_000, max: 100_000 }).filter((c) => c !== 0) }),
  fc.record({ kind: fc.constant("payment" as const), shop, cents: fc.integer({ min: 1, max: 200_000 }), capturedPct: pct, rate: fc.nat(RATES.length - 1) }),
  fc.record({ kind: fc.constant("reserve" as const), shop, cents: fc.integer({ min: 1, max: 100_000 }), overdraftCents: fc.oneof(fc.constant(0), fc.nat(50_000)), rate: fc.nat(RATES.length - 1) }),
  fc.record({ kind: fc.constant("complete" as const), pick: fc.nat(), capturedPct: pct }),
  fc.record({ kind: fc.constant("end" as const), pick: fc.nat(), status: fc.constantFrom("declined" as const, "expired" as const, "cancelled" as const) }),
  fc.record({ kind: fc.constant("release" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("redeliver" as const), pick: fc.nat() }),
);

const cents = (n: number) => new Money(n).div(100).toFixed(2);
const captured = (expected: string, p: number) => Money.max(new Money(expected).times(p).div(100).toDecimalPlaces(2), "0.01").toFixed(2);

interface Position {
  available: Decimal;
  reserved: Decimal;
}
interface Payout {
  operationId: string;
  shop: ShopKey;
  amount: string;
  fxRate?: string;
  total: Decimal;
  held: boolean;
}

/** One run: two fresh shops (settling in RUB and in USDT) and a model of their positions. */
class Run {
  readonly shops: Record<ShopKey, string> = { rub: randomUUID(), usdt: randomUUID() };
  readonly settles: Record<ShopKey, Currency> = { rub: "RUB", usdt: "USDT" };
  readonly model = new Map<string, Position>();
  readonly payouts: Payout[] = [];
  readonly events: StatusEvent[] = [];

  position(shop: ShopKey, currency: Currency): Position {
    const key = `${shop}:${currency}`;
    if (!this.model.has(key)) this.model.set(key, { available: new Money(0), reserved: new Money(0) });
    return this.model.get(key)!;
  }

  /** fx_rate when the shop settles in another currency than the operation's (RUB). */
  rateFor(shop: ShopKey, index: number): string | undefined {
    return this.settles[shop] === "RUB" ? undefined : RATES[index];
  }

  async quote(type: "payment" | "payout", shop: ShopKey, amount: string, fxRate?: string) {
    return ledger.client.quote({ shopId: this.shops[shop], type, method: "WT_RUB_C2C", amount, currency: "RUB", settlementCurrency: this.settles[shop], fxRate });
  }

  async deliver(facts: OperationFacts) {
    const ev = statusEvent(facts);
    this.events.push(ev);
    await ledger.deliver(ev);
  }

  async apply(s: Step): Promise<void> {
    switch (s.kind) {
      case "adjust": {
        const currency = this.settles[s.shop];
        const amount = cents(s.cents);
        await ledger.client.adjust({ shopId: this.shops[s.shop], currency, amount, reason: "property", actor: "test", idempotencyKey: randomUUID() });
        const p = this.position(s.shop, currency);
        p.available = p.available.plus(amount);
        return;
      }
      case "payment": {
        const expected = cents(s.cents);
        const actualAmount = captured(expected, s.capturedPct);
        const fxRate = this.rateFor(s.shop, s.rate);
        const q = await this.quote("payment", s.shop, actualAmount, fxRate);
        await this.deliver({
          operationId: randomUUID(),
          shopId: this.shops[s.shop],
          type: "payment",
          status: "completed",
          currency: "RUB",
          expected,
          actualAmount,
          fxRate,
          settlementCurrency: q.settlementCurrency,
          settlementAmount: q.settlementAmount,
          commissionAmount: q.commissionAmount,
          recordedAmount: fxRate ? q.recordedAmount : undefined,
          recordedCurrency: fxRate ? q.settlementCurrency : undefined,
        });
        const p = this.position(s.shop, this.settles[s.shop]);
        p.available = p.available.plus(q.settlementAmount);
        return;
      }
      case "reserve": {
        const amount = cents(s.cents);
        const fxRate = this.rateFor(s.shop, s.rate);
        const currency = this.settles[s.shop];
        const overdraft = formatAmount(new Money(s.overdraftCents).div(100), currency);
        const total = new Money((await this.quote("payout", s.shop, amount, fxRate)).settlementAmount);
        const operationId = randomUUID();
        const req = { shopId: this.shops[s.shop], operationId, method: "WT_RUB_C2C", amount, currency: "RUB", settlementCurrency: currency, fxRate, overdraftLimit: overdraft };
        const outcome = await outcomeOf(ledger.client.reserve(req), (r) => r.reservedAmount);
        const p = this.position(s.shop, currency);
        const covered = p.available.minus(total).gte(new Money(overdraft).neg());
        expect({ outcome, covered }).toEqual({ outcome: covered ? formatAmount(total, currency) : "insufficient_balance", covered });
        if (covered) {
          p.available = p.available.minus(total);
          p.reserved = p.reserved.plus(total);
          this.payouts.push({ operationId, shop: s.shop, amount, fxRate, total, held: true });
        }
        return;
      }
      case "complete": {
        const payout = this.pickHeld(s.pick);
        if (!payout) return;
        const actualAmount = captured(payout.amount, s.capturedPct);
        const q = await this.quote("payout", payout.shop, actualAmount, payout.fxRate);
        await this.deliver({
          operationId: payout.operationId,
          shopId: this.shops[payout.shop],
          type: "payout",
          status: "completed",
          currency: "RUB",
          expected: payout.amount,
          actualAmount,
          fxRate: payout.fxRate,
          settlementCurrency: q.settlementCurrency,
          settlementAmount: q.settlementAmount,
          commissionAmount: q.commissionAmount,
          recordedAmount: payout.fxRate ? q.recordedAmount : undefined,
          recordedCurrency: payout.fxRate ? q.settlementCurrency : undefined,
        });
        const p = this.position(payout.shop, this.settles[payout.shop]);
        p.reserved = p.reserved.minus(payout.total);
        p.available = p.available.plus(payout.total).minus(q.settlementAmount);
        payout.held = false;
        return;
      }
      case "end":
      case "release": {
        const payout = this.pickHeld(s.pick);
        if (!payout) return;
        if (s.kind === "end") {
          const facts = { operationId: payout.operationId, shopId: this.shops[payout.shop], type: "payout" as const, currency: "RUB", expected: payout.amount, actualAmount: "0.00" };
          await this.deliver({ ...facts, status: s.status, fxRate: payout.fxRate, settlementCurrency: this.settles[payout.shop] });
        } else {
          expect(await ledger.client.releaseReserve({ operationId: payout.operationId })).toMatchObject({ released: true });
        }
        const p = this.position(payout.shop, this.settles[payout.shop]);
        p.reserved = p.reserved.minus(payout.total);
        p.available = p.available.plus(payout.total);
        payout.held = false;
        return;
      }
      case "redeliver": {
        if (this.events.length === 0) return;
        await ledger.deliver(this.events[s.pick % this.events.length], randomUUID());
        return;
      }
    }
  }

  pickHeld(pick: number): Payout | undefined {
    const held = this.payouts.filter((p) => p.held);
    return held.length ? held[pick % held.length] : undefined;
  }

  async check(): Promise<void> {
    expect(await journalViolations(ledger.db)).toEqual(NO_VIOLATIONS);
    for (const key of ["rub", "usdt"] as const) {
      const rows = await balancesOf(ledger, this.shops[key]);
      for (const currency of ["RUB", "USDT"] as const) {
        const row = rows[currency];
        const balance = new Money(row.balance);
        const reserved = new Money(row.reserved);
        expect(reserved.gte(0)).toBe(true);
        expect(row.currentMinus).toBe(formatAmount(Money.max(balance.plus(reserved).neg(), 0), currency));
        const p = this.position(key, currency);
        expect({ shop: key, currency, balance: row.balance, reserved: row.reserved }).toEqual({
          shop: key,
          currency,
          balance: p.available.toFixed(CURRENCY_SCALE[currency]),
          reserved: p.reserved.toFixed(CURRENCY_SCALE[currency]),
        });
      }
    }
  }
}

it("keeps the journal balanced and every balance equal to its journal and to the model after every step", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
      const run = new Run();
      for (const s of steps) {
        await run.apply(s);
        await run.check();
      }
    }),
    { numRuns: 25, endOnFailure: true },
  );
});
