/**
 * The operations store against a real Postgres migrated as the unit migrates it: the statements
 * that decide races (the `creating` row's compare and set, the row lock of a transition) and the
 * status-event replay's partial index; and the provider evidence a completion's status event hands on.
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import { createPgDb, DEV_DATA_KEYS, migrate, parseDataKeys } from "@pgw/kit/db";
import { EventDeferred } from "@pgw/kit/events";
import { type Logger } from "@pgw/kit/runtime";
import { OperationStatusChangedSchema, ProviderEvidenceSchema, ProviderUpdateSchema, type ProviderUpdate } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { sql } from "kysely";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { memoryLog, TestDatabases, waitFor } from "@pgw/kit/testing";
import type { Peers } from "../src/connectors/peers";
import type { CreateCommand } from "../src/domain/create-rules";
import { EARLIER_UPDATE_WAIT_MS } from "../src/domain/provider-update-order";
import { statusChangedEvent, writeStatusChange } from "../src/events";
import type { DB } from "../src/generated/kysely/database";
import { OperationSchema } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { applyProviderUpdate } from "../src/handlers/apply-provider-update";
import { applyTransition } from "../src/handlers/transition-operation";
import { operationSnapshot } from "../src/handlers/wire";
import {
  changedOperation,
  claimInShop,
  findOperationById,
  lockOperation,
  publishedStatusEvents,
  releaseCreating,
  updateOperationFromWithEvent,
  type OperationRow,
  type Sql,
} from "../src/store";

const dbs = new TestDatabases("operations_store");
let url: string;
let db: Sql;
let shopId: string;

beforeAll(async () => {
  url = await dbs.create();
  await migrate(url, path.join(__dirname, "..", "prisma", "migrations"));
  db = createPgDb<DB>(url, 4);
  const merchantId = randomUUID();
  shopId = randomUUID();
  await db.insertInto("merchants").values({ id: merchantId, name: "m" }).execute();
  await db.insertInto("shops").values({ id: shopId, merchantId, name: "s", overdraftLimit: "0.000000" }).execute();
});

afterAll(async () => {
  await db?.end();
  await dbs.dropAll();
});

const payment = (merchantOperationId = `moid-${randomUUID()}`): CreateCommand => ({
  type: "payment",
  merchantOperationId,
  clientId: "client",
  method: "WT_RUB_C2C",
  amount: "1500.00",
  currency: "RUB",
});
const sealed = { requestHash: "hash", destNumber: null };

async function claim(cmd = payment()): Promise<OperationRow> {
  const { claimed } = await claimInShop(db, shopId, cmd, sealed);
  if (!claimed) throw new Error("the key was not free");
  return claimed;
}

/** Routing's answer as `record` stores it (create-operation.ts). */
const ALLOCATED = {
  status: "pending",
  number: "sealed-requisites",
  holderName: "Holder",
  bankname: "sberbank",
  settlementCurrency: "RUB",
  settlementAmount: "1462.500000",
  commissionAmount: "37.500000",
  expiresAt: new Date("2030-01-01T00:00:00.000Z"),
  allocationId: "alloc-1",
};

const eventsOf = (operationId: string) =>
  db
    .selectFrom("outbox")
    .select(["subject", "payload"])
    .orderBy("createdAt")
    .execute()
    .then((rows) => rows.map((r) => ({ subject: r.subject, message: fromBinary(OperationStatusChangedSchema, r.payload) })).filter((e) => e.message.operationId === operationId));

/** Keeps a transaction open at `hold()` until `release()`; `held` resolves once it got there. */
function holdOpen() {
  let arrived!: () => void;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (arrived = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    held,
    release,
    hold: () => {
      arrived();
      return released;
    },
  };
}

/** Waits until some backend of this test's database waits for a row lock. */
const someoneWaitsForALock = () =>
  waitFor(async () => {
    const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db);
    return rows.rows[0].n > 0;
  }, 10_000, "a statement waiting for the row lock", 10);

describe("claiming a key", () => {
  it("claims (shop, merchant_operation_id) once; a second claim finds the shop and no row; an unknown shop finds neither", async () => {
    const cmd = payment();
    const first = await claimInShop(db, shopId, cmd, sealed);
    expect(first.shop).toMatchObject({ id: shopId, settlementCurrency: "RUB", checkoutEnabled: false });
    expect(first.shop!.overdraftLimit.toFixed(6)).toBe("0.000000");
    expect(first.claimed).toMatchObject({ shopId, status: "creating", merchantOperationId: cmd.merchantOperationId, settlementCurrency: "RUB" });
    expect(first.claimed!.expectedAmount.toFixed(2)).toBe("1500.00");

    const second = await claimInShop(db, shopId, cmd, sealed);
    expect(second).toEqual({ shop: first.shop, claimed: null });
    expect(await claimInShop(db, randomUUID(), payment(), sealed)).toEqual({ shop: null, claimed: null });
  });
});

describe("recording an allocation (compare and set on `creating`, with its event in the same statement)", () => {
  it("stores the row the event describes", async () => {
    const claimed = await claim();
    const stored = await updateOperationFromWithEvent(db, claimed, "creating", ALLOCATED, (changed) => statusChangedEvent(changed, "creating"));
    expect(stored).not.toBeNull();
    // The event was made before the statement ran, from changedOperation: it must be the row as stored.
    expect(changedOperation(claimed, ALLOCATED, stored!.updatedAt)).toEqual(stored);
    const events = await eventsOf(claimed.id);
    expect(events.map((e) => e.subject)).toEqual(["pgw.operation.status_changed.nonterminal.pending"]);
    expect(events[0].message.operation).toEqual(create(OperationSchema, operationSnapshot(stored!)));

    // Moved on: a second record changes nothing and writes no event.
    expect(await updateOperationFromWithEvent(db, claimed, "creating", ALLOCATED, (changed) => statusChangedEvent(changed, "creating"))).toBeNull();
    expect(await eventsOf(claimed.id)).toHaveLength(1);
  });

  it("puts the number in the event sealed exactly as stored; one an earlier version stored in clear, and none, stay out", async () => {
    const keys = parseDataKeys(DEV_DATA_KEYS, undefined);
    const sealedNumber = keys.seal("2200700012345678");
    for (const [number, carried] of [[sealedNumber, sealedNumber], ["2200700012345678", ""], [null, ""]] as const) {
      const claimed = await claim();
      await updateOperationFromWithEvent(db, claimed, "creating", { ...ALLOCATED, number }, (changed) => statusChangedEvent(changed, "creating"));
      const [event] = await eventsOf(claimed.id);
      expect({ number, carried: event.message.sealedNumber }).toEqual({ number, carried });
      expect(event.message.operation?.number).toBeUndefined();
    }
  });

  it("loses to a cancel that locked the creating row first: nothing recorded, no event, and the row is not released", async () => {
    const cmd = payment();
    const claimed = await claim(cmd);
    const gate = holdOpen();
    const cancel = db.$transaction(async (tx) => {
      const row = (await lockOperation(tx, shopId, { merchantOperationId: cmd.merchantOperationId }))!;
      await writeStatusChange(tx, row, { status: "cancelled", settlementAmount: "0", commissionAmount: "0" });
      await gate.hold();
    });
    await gate.held;
    // The create's record arrives while the cancel holds the row: it waits, then finds the row no longer `creating`.
    const record = updateOperationFromWithEvent(db, claimed, "creating", ALLOCATED, (changed) => statusChangedEvent(changed, "creating"));
    await someoneWaitsForALock();
    gate.release();
    await cancel;

    expect(await record).toBeNull();
    expect(await releaseCreating(db, claimed.id)).toBe(false);
    const row = await db.selectFrom("operations").selectAll().where("id", "=", claimed.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: "cancelled", number: null, allocationId: null });
    expect((await eventsOf(claimed.id)).map((e) => e.subject)).toEqual(["pgw.operation.status_changed.terminal.cancelled"]);
  });
});

describe("a transition under the row lock", () => {
  it("is applied once when two provider updates for the operation run at once", async () => {
    const claimed = await claim();
    await updateOperationFromWithEvent(db, claimed, "creating", ALLOCATED, (changed) => statusChangedEvent(changed, "creating"));
    const log = memoryLog();
    const update = create(ProviderUpdateSchema, { operationId: claimed.id, status: "expired", sequence: 1 });
    const gate = holdOpen();
    const first = db.$transaction(async (tx) => {
      await applyProviderUpdate(tx, update, new Date(), {} as Peers, log as unknown as Logger);
      await gate.hold();
    });
    await gate.held; // the first has expired the operation and holds its row
    const second = db.$transaction((tx) => applyProviderUpdate(tx, update, new Date(), {} as Peers, log as unknown as Logger));
    await someoneWaitsForALock();
    gate.release();
    await Promise.all([first, second]);

    expect((await eventsOf(claimed.id)).map((e) => e.subject)).toEqual(["pgw.operation.status_changed.nonterminal.pending", "pgw.operation.status_changed.terminal.expired"]);
    expect(log.lines).toContainEqual(expect.objectContaining({ msg: "provider update does not apply; dropped", obj: expect.objectContaining({ operation_id: claimed.id, status: "expired" }) }));
  });
});

describe("a provider's updates of one operation, in routing's order", () => {
  const pendingOperation = async () => {
    const claimed = await claim();
    const tariff = { tariffPercent: "2.5", tariffFixed: "0", tariffMinimum: "0" };
    await updateOperationFromWithEvent(db, claimed, "creating", { ...ALLOCATED, ...tariff }, (changed) => statusChangedEvent(changed, "creating"));
    return claimed.id;
  };
  const updateOf = (operationId: string, sequence: number, status: string, actualAmount?: string) =>
    create(ProviderUpdateSchema, { operationId, status, actualAmount, sequence, occurredAt: new Date().toISOString() });
  const apply = (update: ProviderUpdate, log = memoryLog(), storedAt = new Date()) =>
    db.$transaction((tx) => applyProviderUpdate(tx, update, storedAt, {} as Peers, log as unknown as Logger));
  const stateOf = async (operationId: string) => {
    const row = (await findOperationById(db, operationId))!;
    return { status: row.status, applied: row.providerUpdatesApplied, updatedAt: row.updatedAt };
  };
  const lateFundsOf = (operationId: string) => db.selectFrom("lateFunds").select(["amount"]).where("operationId", "=", operationId).execute();

  it("waits for the earlier one: money reported after an expiry is late funds, whichever update comes first", async () => {
    const operationId = await pendingOperation();
    await expect(apply(updateOf(operationId, 2, "completed", "100.00"))).rejects.toBeInstanceOf(EventDeferred);
    expect(await stateOf(operationId)).toMatchObject({ status: "pending", applied: 0 });
    await apply(updateOf(operationId, 1, "expired"));
    expect(await stateOf(operationId)).toMatchObject({ status: "expired", applied: 1 });
    await apply(updateOf(operationId, 2, "completed", "100.00"));
    expect(await stateOf(operationId)).toMatchObject({ status: "expired", applied: 2 });
    expect((await lateFundsOf(operationId)).map((l) => l.amount.toFixed(2))).toEqual(["100.00"]);
  });

  it("counts an update that changed nothing as applied, without touching the operation's last change", async () => {
    const operationId = await pendingOperation();
    await apply(updateOf(operationId, 1, "declined"));
    const declined = await stateOf(operationId);
    await apply(updateOf(operationId, 2, "expired")); // an ended operation does not expire
    expect(await stateOf(operationId)).toEqual({ ...declined, applied: 2 });
    await apply(updateOf(operationId, 3, "completed")); // no amount: dropped
    expect(await stateOf(operationId)).toEqual({ ...declined, applied: 3 });
  });

  it("applies a later one without the earlier once it has waited its time, with an alert; the earlier one, if it comes, as it stands", async () => {
    const operationId = await pendingOperation();
    const log = memoryLog();
    await apply(updateOf(operationId, 2, "completed", "100.00"), log, new Date(Date.now() - EARLIER_UPDATE_WAIT_MS));
    expect(await stateOf(operationId)).toMatchObject({ status: "completed", applied: 2 });
    expect(log.lines).toContainEqual(expect.objectContaining({ level: "error", obj: expect.objectContaining({ alert: "provider_update_missing", operation_id: operationId, sequence: 2, applied: 0 }) }));
    await apply(updateOf(operationId, 1, "expired"), log);
    expect(await stateOf(operationId)).toMatchObject({ status: "completed", applied: 2 });
    expect(log.lines).toContainEqual(expect.objectContaining({ level: "warn", obj: expect.objectContaining({ operation_id: operationId, sequence: 1, applied: 2 }) }));
  });

  it("applies updates not numbered (from a routing before the numbering) as they come", async () => {
    const operationId = await pendingOperation();
    await apply(updateOf(operationId, 0, "expired"));
    expect(await stateOf(operationId)).toMatchObject({ status: "expired", applied: 0 });
  });
});

describe("a completion's provider evidence", () => {
  /** Ledger's Quote as a completion asks it: the figures do not matter here. */
  const quoting = { ledger: { quote: async () => ({ recordedAmount: "100.00", settlementCurrency: "RUB", settlementAmount: "97.50", commissionAmount: "2.50" }) } } as unknown as Peers;
  const pending = async (status = "pending") => {
    const claimed = await claim();
    await updateOperationFromWithEvent(db, claimed, "creating", { ...ALLOCATED, status }, (changed) => statusChangedEvent(changed, "creating"));
    return claimed.id;
  };
  const completedEvent = async (operationId: string) => (await eventsOf(operationId)).find((e) => e.message.status === "completed")!.message;
  const leg = { legId: "L1", amount: "100.00", completedAt: "2031-01-01T00:00:00.000Z", legacy: false, items: [{ id: "i1", amount: "100.00", completedAt: "2031-01-01T00:00:00.000Z", hasFile: true }] };

  it.each([
    ["the provider's legs", { legs: [leg] }],
    ["none, as the provider reported", { legs: [] }],
  ])("is handed on from the provider's update to the completed status event: %s", async (_name, evidence) => {
    const operationId = await pending();
    const update = create(ProviderUpdateSchema, { operationId, status: "completed", actualAmount: "100.00", occurredAt: new Date().toISOString(), evidence });
    await db.$transaction((tx) => applyProviderUpdate(tx, update, new Date(), quoting, memoryLog() as unknown as Logger));
    expect((await completedEvent(operationId)).providerEvidence).toEqual(create(ProviderEvidenceSchema, evidence));
  });

  it("is left unknown when the update carried none, and on a completion a review decided", async () => {
    const byProvider = await pending();
    const update = create(ProviderUpdateSchema, { operationId: byProvider, status: "completed", actualAmount: "100.00", occurredAt: new Date().toISOString() });
    await db.$transaction((tx) => applyProviderUpdate(tx, update, new Date(), quoting, memoryLog() as unknown as Logger));
    expect((await completedEvent(byProvider)).providerEvidence).toBeUndefined();

    const byReview = await pending("awaiting_confirmation");
    await db.$transaction(async (tx) => {
      const row = (await lockOperation(tx, null, { operationId: byReview }))!;
      await applyTransition(tx, row, { kind: "review", outcome: "completed" }, { actualAmount: "100.00" }, quoting, memoryLog() as unknown as Logger);
    });
    expect((await completedEvent(byReview)).providerEvidence).toBeUndefined();
  });
});

describe("a completion's figures", () => {
  const complete = async (change: object, peers: Peers) => {
    const claimed = await claim();
    await updateOperationFromWithEvent(db, claimed, "creating", { ...ALLOCATED, ...change }, (changed) => statusChangedEvent(changed, "creating"));
    const update = create(ProviderUpdateSchema, { operationId: claimed.id, status: "completed", actualAmount: "1000.00", occurredAt: new Date().toISOString() });
    await db.$transaction((tx) => applyProviderUpdate(tx, update, new Date(), peers, memoryLog() as unknown as Logger));
    const row = (await findOperationById(db, claimed.id))!;
    return [row.status, row.recordedAmount?.toFixed(), row.commissionAmount?.toFixed(), row.settlementAmount?.toFixed()];
  };

  it("settle with the tariff kept at create, without a call to the ledger", async () => {
    const noLedger = {} as Peers; // any call to the ledger would throw
    expect(await complete({ tariffPercent: "2.5", tariffFixed: "0", tariffMinimum: "0" }, noLedger)).toEqual(["completed", "1000", "25", "975"]);
  });

  it("are in the status event as stored, written by the statement that changed the row", async () => {
    const claimed = await claim();
    await updateOperationFromWithEvent(db, claimed, "creating", { ...ALLOCATED, tariffPercent: "2.5", tariffFixed: "0.1", tariffMinimum: "0" }, (changed) => statusChangedEvent(changed, "creating"));
    const update = create(ProviderUpdateSchema, { operationId: claimed.id, status: "completed", actualAmount: "1234.56", occurredAt: new Date().toISOString() });
    await db.$transaction((tx) => applyProviderUpdate(tx, update, new Date(), {} as Peers, memoryLog() as unknown as Logger));
    const row = (await findOperationById(db, claimed.id))!;
    const event = (await eventsOf(claimed.id)).find((e) => e.message.status === "completed")!.message;
    expect(event.operation).toEqual(create(OperationSchema, operationSnapshot(row)));
    expect(event.operation).toMatchObject({ actualAmount: "1234.56", commissionAmount: "30.96", settlementAmount: "1203.60" });
    expect({ occurredAt: event.occurredAt, previousStatus: event.previousStatus }).toEqual({ occurredAt: row.updatedAt.toISOString(), previousStatus: "pending" });
  });

  it("ask the ledger's Quote for an operation created before tariffs were kept", async () => {
    const asked: unknown[] = [];
    const ledger = { quote: async (req: unknown) => (asked.push(req), { recordedAmount: "1000.00", settlementCurrency: "RUB", settlementAmount: "980.00", commissionAmount: "20.00" }) };
    expect(await complete({}, { ledger } as unknown as Peers)).toEqual(["completed", "1000", "20", "980"]);
    expect(asked).toEqual([expect.objectContaining({ type: "payment", amount: "1000.00", currency: "RUB", settlementCurrency: "RUB" })]);
  });
});

describe("the status-event replay", () => {
  it("answers published status events after a time, in order, through the partial index whose predicate it repeats", async () => {
    const base = Date.parse("2031-01-01T00:00:00.000Z");
    const at = (s: number) => new Date(base + s * 1000);
    const row = (subject: string, s: number, published: boolean) => ({ id: randomUUID(), subject, payload: Buffer.from(subject), createdAt: at(s), publishedAt: published ? at(s) : null });
    const rows = [
      row("pgw.operation.status_changed.terminal.completed", 1, true),
      row("pgw.accounts.shop_changed", 2, true),
      row("pgw.operation.status_changed.nonterminal.pending", 3, true),
      row("pgw.operation.status_changed.terminal.expired", 4, false),
      // `_` is a LIKE wildcard: the pattern escapes it, so this subject does not match.
      row("pgw.operation.statusXchanged.terminal.completed", 5, true),
      row("pgw.operation.status_changed.terminal.cancelled", 6, true),
    ];
    await db.insertInto("outbox").values(rows).execute();

    const replayed = await publishedStatusEvents(db, at(0), 10);
    expect(replayed.map((r) => r.id)).toEqual([rows[0].id, rows[2].id, rows[5].id]);
    expect((await publishedStatusEvents(db, at(1), 1)).map((r) => r.id)).toEqual([rows[2].id]);

    // The plan of the statement as prepared on the connection, with sequential scans made dear.
    const one = createPgDb<DB>(url, 1);
    try {
      await publishedStatusEvents(one, at(0), 10);
      const plan = await one.$transaction(async (tx) => {
        await sql`SET LOCAL enable_seqscan = off`.execute(tx);
        const { rows: prepared } = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements WHERE statement ILIKE '%"outbox"%'`.execute(tx);
        expect(prepared).toHaveLength(1);
        const explained = await sql<Record<string, string>>`EXPLAIN EXECUTE ${sql.id(prepared[0].name)}(${sql.lit(at(0).toISOString())}, ${sql.lit(10)})`.execute(tx);
        return explained.rows.map((r) => Object.values(r)[0]).join("\n");
      });
      expect(plan).toContain("outbox_status_changed_created_at_idx");
    } finally {
      await one.end();
    }
  });
});
