/**
 * Store statements whose rules a service call cannot show on its own: the orphan sweep's read
 * keeping its partial index under a prepared (generic) plan and its cursor order, the row lock
 * a payout's reserve holds from its release to the commit, and the statements an entry takes.
 */
import { Money } from "@pgw/contracts";
import { sql } from "kysely";
import { randomUUID } from "node:crypto";
import { pollUntil } from "../../../test/support/poll";
import { recordingDb } from "@pgw/kit/testing";
import { shopAccount, systemAccount, type EntryDraft } from "../src/domain/journal";
import { inTransaction, type Db } from "../src/store";
import { postEntry } from "../src/store/journal";
import { completePayout, heldReservesBefore, heldReservesQuery, releaseReserve } from "../src/store/reserves";
import { balancesOf, journalViolations, NO_VIOLATIONS, useTestLedger } from "./support";

const ledger = useTestLedger();
const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe("held reserves (the orphan sweep's read)", () => {
  it("can use the partial index of held reserves under a generic plan, as a prepared statement runs", async () => {
    const { sql: text } = heldReservesQuery(ledger.db, new Date(), null, 100).compile();
    const plan = await ledger.db.$transaction(async (tx) => {
      await sql`SET LOCAL plan_cache_mode = force_generic_plan`.execute(tx);
      await sql`SET LOCAL enable_seqscan = off`.execute(tx);
      await sql`PREPARE held_reserves_plan AS ${sql.raw(text)}`.execute(tx);
      try {
        const { rows } = await sql<Record<string, string>>`EXPLAIN EXECUTE held_reserves_plan(now(), 'epoch', '00000000-0000-0000-0000-000000000000', 100)`.execute(tx);
        return rows.flatMap((r) => Object.values(r)).join("\n");
      } finally {
        await sql`DEALLOCATE held_reserves_plan`.execute(tx);
      }
    });
    expect(plan).toContain("reserves_held_idx");
  });

  it("pages through held reserves made before a time, oldest first and by operation id within one instant", async () => {
    const shopId = randomUUID();
    const at = (iso: string) => new Date(iso);
    const ids = [randomUUID(), randomUUID(), randomUUID()].sort();
    const reserve = (operationId: string, createdAt: Date, status = "held") => ({ operationId, shopId, currency: "RUB", amount: "1.00", commission: "0.02", status, createdAt });
    await ledger.db
      .insertInto("reserves")
      .values([
        reserve(ids[2], at("2001-01-01T00:00:00Z")),
        reserve(ids[0], at("2001-01-01T00:00:00Z")),
        reserve(ids[1], at("2001-01-01T00:00:00Z")),
        reserve(randomUUID(), at("2000-06-01T00:00:00Z")),
        reserve(randomUUID(), at("2000-01-01T00:00:00Z"), "consumed"),
        reserve(randomUUID(), at("2000-01-01T00:00:00Z"), "released"),
        reserve(randomUUID(), at("2001-06-01T00:00:00Z")), // not before the cut-off
      ])
      .execute();
    const before = at("2001-02-01T00:00:00Z");
    const first = await heldReservesBefore(ledger.db, before, null, 2);
    expect(first.map((r) => r.createdAt.toISOString())).toEqual(["2000-06-01T00:00:00.000Z", "2001-01-01T00:00:00.000Z"]);
    expect(first[1].operationId).toBe(ids[0]);
    expect(first.every((r) => r.shopId === shopId)).toBe(true);
    const second = await heldReservesBefore(ledger.db, before, first[1], 2);
    expect(second.map((r) => r.operationId)).toEqual([ids[1], ids[2]]);
    expect(await heldReservesBefore(ledger.db, before, second[1], 2)).toEqual([]);
  });
});

describe("a payout's reserve row lock", () => {
  it("makes a completion that arrives while the release is uncommitted wait, then find the reserve released", async () => {
    const shopId = randomUUID();
    const operationId = randomUUID();
    await ledger.client.adjust({ shopId, currency: "RUB", amount: "1000.00", reason: "funding", actor: "test", idempotencyKey: randomUUID() });
    await ledger.client.reserve({ shopId, operationId, method: "WT_RUB_C2C", amount: "100.00", currency: "RUB", settlementCurrency: "RUB", overdraftLimit: "0" });

    let commitRelease!: () => void;
    const mayCommit = new Promise<void>((resolve) => (commitRelease = resolve));
    let releasedUncommitted!: () => void;
    const uncommitted = new Promise<void>((resolve) => (releasedUncommitted = resolve));
    const release = inTransaction(ledger.db, async (tx) => {
      const released = await releaseReserve(tx, operationId, { reason: "test", actor: "test" });
      releasedUncommitted();
      await mayCommit;
      return released;
    });
    await uncommitted;

    const capture = {
      shopId,
      currency: "RUB" as const,
      actual: new Money("100.00"),
      settlementCurrency: "RUB" as const,
      recorded: new Money("100.00"),
      commission: new Money("1.50"),
      settlement: new Money("101.50"),
    };
    const completion = inTransaction(ledger.db, (tx) => completePayout(tx, operationId, capture, "test", silent));
    // The completion is blocked on a row lock the release holds (its reserve row, when it locks it).
    const waiting = async () => (await sql`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(ledger.db)).rows;
    expect(await pollUntil(waiting, (rows) => rows.length > 0, 10_000, 10)).toHaveLength(1);
    commitRelease();
    expect(await release).toBe(true);
    expect(await completion).toMatchObject({ created: true });

    // released first, so the completion was charged to available, never to the emptied reserve
    const [row] = await ledger.db.selectFrom("reserves").select("status").where("operationId", "=", operationId).execute();
    expect(row.status).toBe("released");
    expect((await balancesOf(ledger, shopId)).RUB).toEqual({ balance: "898.50", currentMinus: "0.00", reserved: "0.00" });
    expect(await journalViolations(ledger.db)).toEqual(NO_VIOLATIONS);
  });
});

describe("an entry's statements", () => {
  const adjustment = (shopId: string, source = `adjust:${randomUUID()}`): EntryDraft => ({
    source,
    kind: "adjustment",
    shopId,
    reason: "test",
    actor: "test",
    postings: [
      { account: shopAccount(shopId, "available", "RUB"), amount: new Money("10.00") },
      { account: systemAccount("manual_adjustments", "RUB"), amount: new Money("-10.00") },
    ],
  });

  it("are three: the source claimed with the missing accounts, their lock, the postings with the balances", async () => {
    const recorded = recordingDb(ledger.db.pool);
    const posted = await inTransaction(recorded.db as Db, (tx) => postEntry(tx, adjustment(randomUUID())));
    expect(posted).toMatchObject({ created: true });
    const sent = recorded.statements.map((s) => s.sql).filter((q) => !/^(BEGIN|COMMIT)/.test(q));
    expect(sent).toEqual([
      expect.stringMatching(/^with "entry" as \(insert into "journal_entries"/),
      expect.stringMatching(/^select "a"."id"/),
      expect.stringMatching(/^with "p" as \(insert into "postings"/),
    ]);
    expect(await journalViolations(ledger.db)).toEqual(NO_VIOLATIONS);
  });

  it("create no account when the source was claimed before", async () => {
    const first = adjustment(randomUUID());
    await inTransaction(ledger.db, (tx) => postEntry(tx, first));
    const otherShop = randomUUID();
    const repeated = await inTransaction(ledger.db, (tx) => postEntry(tx, adjustment(otherShop, first.source)));
    expect(repeated).toMatchObject({ created: false, sameContent: false });
    expect(await ledger.db.selectFrom("accounts").select("id").where("shopId", "=", otherShop).execute()).toEqual([]);
  });

  it("create a new shop's accounts once when its first entries run at once", async () => {
    const shopId = randomUUID();
    const results = await Promise.all(Array.from({ length: 8 }, () => inTransaction(ledger.db, (tx) => postEntry(tx, adjustment(shopId)))));
    expect(results.every((r) => r.created)).toBe(true);
    expect(await ledger.db.selectFrom("accounts").select("kind").where("shopId", "=", shopId).execute()).toEqual([{ kind: "available" }]);
    expect((await balancesOf(ledger, shopId)).RUB?.balance).toBe("80.00");
    expect(await journalViolations(ledger.db)).toEqual(NO_VIOLATIONS);
  });
});
