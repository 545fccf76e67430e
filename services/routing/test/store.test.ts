/**
 * The store's statements on a real database, where a rule lives in the SQL itself: which conflict
 * decides an insert, which rows an update may touch, the row lock a callback takes, and the partial
 * index the reconciliation's query must keep using.
 */
import { createPgDb, ensureDatabase, isUniqueViolation, migrate, type PgDb } from "@pgw/kit/db";
import { sql } from "kysely";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { pollUntil } from "../../../test/support/poll";
import { dropDatabases, uniqueDatabaseUrl } from "../../../test/support/infra";
import {
  attachPlacementToTombstone,
  findAllocation,
  insertAllocation,
  insertTombstone,
  latestFxRate,
  lockAllocationByReference,
  markReleased,
  recordCallback,
  seedDefaults,
  setAllocationStatus,
  staleActiveAllocations,
  type DB,
  type NewAllocation,
} from "../src/store";

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const url = uniqueDatabaseUrl("routing_store");
let db: PgDb<DB>;
let providerId: string;

beforeAll(async () => {
  await ensureDatabase(url);
  await migrate(url, path.join(__dirname, "..", "prisma", "migrations"), silent);
  db = createPgDb<DB>(url, 4);
  providerId = randomUUID();
  await db.insertInto("providers").values({ id: providerId, code: "p1", name: "P1", connector: "sandbox", baseUrl: "http://127.0.0.1:9", callbackSecret: "s", timeoutMs: 1000 }).execute();
}, 60_000);
afterAll(async () => {
  await db?.end();
  await dropDatabases([url]);
});

/** A new active allocation's fields at provider p1. */
const placed = (over: Partial<NewAllocation> = {}): NewAllocation => ({
  operationId: randomUUID(),
  providerId,
  providerReference: `ref-${randomUUID()}`,
  type: "payment",
  method: "WT_RUB_C2C",
  amount: "100.00",
  currency: "RUB",
  settlementCurrency: "RUB",
  requisitesNumber: "v1:sealed",
  fxRate: null,
  ...over,
});

describe("allocations", () => {
  it("one per operation: a second insert, or a tombstone, finds the first there; a reference another operation holds is a unique violation", async () => {
    const data = placed();
    const row = await insertAllocation(db, data);
    expect(row).toMatchObject({ operationId: data.operationId, status: "active", providerReference: data.providerReference, currency: "RUB" });
    expect(row?.amount?.toFixed(2)).toBe("100.00");
    expect(await insertAllocation(db, placed({ operationId: data.operationId }))).toBeUndefined();
    expect(await insertTombstone(db, data.operationId, "cancel")).toBe(false);
    const taken = await insertAllocation(db, placed({ providerReference: data.providerReference })).catch((e: unknown) => e);
    expect(isUniqueViolation(taken)).toBe(true);
  });

  it("a tombstone takes one later placement; only an active allocation is released, once", async () => {
    const operationId = randomUUID();
    expect(await insertTombstone(db, operationId, "cancel")).toBe(true);
    expect(await findAllocation(db, operationId)).toMatchObject({ status: "released", releaseReason: "cancel", provider: null });
    expect(await markReleased(db, operationId, "again")).toBe(false);
    const placement = { providerId, routeId: randomUUID(), providerReference: `ref-${randomUUID()}`, type: "payment", currency: "RUB" };
    expect(await attachPlacementToTombstone(db, operationId, placement)).toBe(true);
    expect(await attachPlacementToTombstone(db, operationId, { ...placement, providerReference: "another" })).toBe(false);
    expect(await findAllocation(db, operationId)).toMatchObject({ status: "released", providerReference: placement.providerReference, provider: { id: providerId, code: "p1" } });

    const active = placed();
    await insertAllocation(db, active);
    expect(await attachPlacementToTombstone(db, active.operationId, placement)).toBe(false);
    expect(await markReleased(db, active.operationId, "merchant")).toBe(true);
    expect(await markReleased(db, active.operationId, "merchant")).toBe(false);
  });

  it("reads an allocation with its provider as the connector needs it", async () => {
    const data = placed();
    await insertAllocation(db, data);
    expect((await findAllocation(db, data.operationId))?.provider).toEqual({
      id: providerId,
      code: "p1",
      connector: "sandbox",
      baseUrl: "http://127.0.0.1:9",
      callbackSecret: "s",
      timeoutMs: 1000,
      enabled: true,
    });
  });

  it("a callback's lock on the allocation holds a second one until it commits, which then reads the new status", async () => {
    const data = placed();
    const allocation = (await insertAllocation(db, data))!;
    let locked!: () => void;
    let release!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const held = new Promise<void>((r) => (release = r));
    const first = db.$transaction(async (tx) => {
      await lockAllocationByReference(tx, providerId, data.providerReference!);
      await setAllocationStatus(tx, allocation, "completed", () => ({ id: randomUUID(), subject: "pgw.routing.provider_update", payload: new Uint8Array() }));
      locked();
      await held;
    });
    await lockTaken;
    const second = db.$transaction((tx) => lockAllocationByReference(tx, providerId, data.providerReference!));
    const waiting = () =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%for update%'`.execute(db);
    // The second locker is seen waiting on the row lock before the first commits.
    expect((await pollUntil(waiting, (r) => r.rows[0].n === 1, 5000)).rows[0].n).toBe(1);
    release();
    await first;
    expect((await second)?.status).toBe("completed");
  });

  it("numbers each provider update after the allocation's last, in the statement that moves it; a caller whose read is stale changes nothing", async () => {
    const allocation = (await insertAllocation(db, placed()))!;
    const outboxRows = () => db.selectFrom("outbox").select("id").where("subject", "=", `updates-of-${allocation.id}`).execute();
    const event = (sequence: number) => ({ id: randomUUID(), subject: `updates-of-${allocation.id}`, payload: new Uint8Array([sequence]) });
    const numbered: number[] = [];
    const move = (read: { id: string; providerUpdates: number }, status: string) =>
      db.$transaction((tx) => setAllocationStatus(tx, read, status, (sequence) => (numbered.push(sequence), event(sequence))));
    await move(allocation, "expired");
    await move((await findAllocation(db, allocation.operationId))!, "completed");
    expect(numbered).toEqual([1, 2]);
    expect((await findAllocation(db, allocation.operationId))!).toMatchObject({ status: "completed", providerUpdates: 2 });
    // A caller that read the allocation before the second update would number its own 2 again.
    await expect(move({ id: allocation.id, providerUpdates: 1 }, "declined")).rejects.toThrow(/moved on/);
    expect((await findAllocation(db, allocation.operationId))!).toMatchObject({ status: "completed", providerUpdates: 2 });
    expect(await outboxRows()).toHaveLength(2);
  });

  it("finds stale active allocations through the partial index of active ones, with their providers, under a generic plan too", async () => {
    const stale = placed();
    await insertAllocation(db, stale);
    const other = placed();
    await insertAllocation(db, other);
    await markReleased(db, other.operationId, "cancel");
    const found = await staleActiveAllocations(db, new Date(Date.now() + 60_000), 1000);
    const ids = found.map((a) => a.operationId);
    expect(ids).toContain(stale.operationId);
    expect(ids).not.toContain(other.operationId);
    expect(found.find((a) => a.operationId === stale.operationId)?.provider).toMatchObject({ id: providerId, code: "p1" });

    // One connection: the statement the store ran is prepared on it, and explained with a plan for any parameters.
    const one = createPgDb<DB>(url, 1);
    try {
      await staleActiveAllocations(one, new Date(), 100);
      const plan = await one.$transaction(async (tx) => {
        const { rows } = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements WHERE statement LIKE '%from "allocations" inner join "providers"%' AND statement LIKE '%order by "allocations"."updated_at"%'`.execute(tx);
        expect(rows).toHaveLength(1);
        await sql`SET LOCAL plan_cache_mode = force_generic_plan`.execute(tx);
        await sql`SET LOCAL enable_seqscan = off`.execute(tx);
        const explained = await sql<{ "QUERY PLAN": string }>`EXPLAIN EXECUTE ${sql.raw(rows[0].name)}(${sql.lit(new Date().toISOString())}, ${sql.lit(100)})`.execute(tx);
        return explained.rows.map((r) => Object.values(r)[0]).join("\n");
      });
      expect(plan).toContain("allocations_active_updated_at_idx");
    } finally {
      await one.end();
    }
  });
});

describe("callbacks", () => {
  it("are recorded once per (provider, callback id)", async () => {
    const c = { providerId, callbackId: randomUUID(), operationId: randomUUID(), status: "completed", body: "v1:sealed" };
    expect(await recordCallback(db, c)).toBe(true);
    expect(await recordCallback(db, { ...c, body: "v1:other" })).toBe(false);
    expect(await recordCallback(db, { ...c, callbackId: randomUUID() })).toBe(true);
  });
});

describe("seed", () => {
  it("adds the sandbox's routes once and its rates once, and refreshes its connection settings", async () => {
    expect(await seedDefaults(db, { baseUrl: "http://127.0.0.1:8090", callbackSecret: "v1:first", timeoutMs: 5000 })).toBe(16);
    expect(await seedDefaults(db, { baseUrl: "http://127.0.0.1:8091", callbackSecret: "v1:second", timeoutMs: 4000 })).toBe(0);
    expect(await db.selectFrom("providers").select(["baseUrl", "callbackSecret", "timeoutMs"]).where("code", "=", "sandbox").execute()).toEqual([
      { baseUrl: "http://127.0.0.1:8091", callbackSecret: "v1:second", timeoutMs: 4000 },
    ]);
    expect(await db.selectFrom("fxRates").select("id").execute()).toHaveLength(2);
    const rate = await latestFxRate(db, "USDT", "RUB");
    expect({ source: rate?.source, rate: rate?.rate.toString() }).toEqual({ source: "sandbox-fx", rate: "91.85" });
  });
});
