/**
 * The store's statements whose rules the service tests reach only by chance: the claim skips rows
 * another replica holds (FOR UPDATE SKIP LOCKED) and leases what it takes; an attempt recorded
 * under a lost lease is logged and changes nothing; a 410 disables only the URL that answered it;
 * settling a delivery without an attempt looks at the endpoint as it is now; the sweeps; two
 * replicas making a shop's first secret at once converge on one; and a claim brings the secrets
 * that sign its deliveries as they are stored then.
 */
import { createPgDb, ensureDatabase, loadDataKeys, migrate } from "@pgw/kit/db";
import { sql } from "kysely";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { dropDatabases, uniqueDatabaseUrl } from "../../../test/support/infra";
import type { DB } from "../src/generated/kysely/database";
import {
  applyShopWebhookUrl,
  claimDue,
  failStaleWaiting,
  insertDelivery,
  recordAttempt,
  rotateSecret,
  settleWithoutAttempt,
  signingSecrets,
  wakeWaitingWithUrl,
  type AttemptResult,
  type ClaimedDelivery,
  type NotifierDb,
} from "../src/store";

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const keys = loadDataKeys({ LOCAL_MODE: "true" });
const url = uniqueDatabaseUrl("notifier_store");
/** Two replicas' pools on one database. */
let a: NotifierDb;
let b: NotifierDb;

beforeAll(async () => {
  await ensureDatabase(url);
  await migrate(url, path.join(__dirname, "..", "prisma", "migrations"), silent);
  a = createPgDb<DB>(url, 3);
  b = createPgDb<DB>(url, 3);
}, 60_000);
afterAll(async () => {
  await Promise.all([a?.end(), b?.end()]);
  await dropDatabases([url]);
});
beforeEach(async () => {
  await a.deleteFrom("deliveryAttempts").execute();
  await a.deleteFrom("deliveries").execute();
  await a.deleteFrom("endpoints").execute();
});

/** A shop whose webhook URL is `webhookUrl` (as its shop_changed event sets it). */
async function shop(webhookUrl: string | null = "https://merchant.example/hooks"): Promise<string> {
  const shopId = randomUUID();
  await a.$transaction((tx) => applyShopWebhookUrl(tx, shopId, webhookUrl, new Date()));
  return shopId;
}

/** A delivery for the shop, as the status consumer records it; resolves to its id. */
async function delivery(shopId: string): Promise<string> {
  const webhookId = `msg_${randomUUID()}`;
  await a.$transaction((tx) => insertDelivery(tx, keys, { webhookId, shopId, operationId: randomUUID(), eventType: "operation.completed", payload: "{}" }));
  return (await a.selectFrom("deliveries").select("id").where("webhookId", "=", webhookId).executeTakeFirstOrThrow()).id;
}

const row = (id: string) =>
  a
    .selectFrom("deliveries")
    .select((eb) => ["status", "attempts", "claimId", "nextAttemptAt", eb(sql<Date>`now()`, ">=", eb.ref("nextAttemptAt")).as("due")])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();

/** Claims every due delivery but those of `excludeShops` (shops with no free slot). */
const claimAll = (db: NotifierDb, excludeShops: string[] = []) => claimDue(db, { limit: 100, perShop: 100, shopSlots: new Map(excludeShops.map((s) => [s, 0])), leaseMs: 60_000 });

const attempt = (over: Partial<AttemptResult>): AttemptResult => ({
  startedAt: new Date(),
  statusCode: 500,
  latencyMs: 5,
  snippet: "",
  error: "",
  status: "pending",
  retryInMs: 1000,
  url: "https://merchant.example/hooks",
  ...over,
});

test("a claim skips the deliveries another replica holds instead of waiting for them, leaves out the excluded shops, and leases what it takes", async () => {
  const [shopA, shopB] = [await shop(), await shop()];
  const ids = [await delivery(shopA), await delivery(shopA), await delivery(shopA)];
  const other = await delivery(shopB);

  // Replica b holds one of them (as its own claim's statement would while it runs).
  let release!: () => void;
  let held!: () => void;
  const heldNow = new Promise<void>((r) => (held = r));
  const holder = b.$transaction(async (tx) => {
    await tx.selectFrom("deliveries").select("id").where("id", "=", ids[0]).forUpdate().execute();
    held();
    await new Promise<void>((r) => (release = r));
  });
  await heldNow;
  try {
    const { claimed, full, passedOver } = await claimAll(a, [shopB]);
    expect(claimed.map((d) => d.id).sort()).toEqual(ids.slice(1).sort());
    expect({ full, passedOver }).toEqual({ full: false, passedOver: false });
    expect(new Set(claimed.map((d) => d.claimId)).size).toBe(1);
    expect(claimed[0]).toMatchObject({ endpointUrl: "https://merchant.example/hooks", endpointDisabled: false, attempts: 0 });
    for (const d of claimed) {
      const leased = await row(d.id);
      expect(leased).toMatchObject({ status: "pending", claimId: d.claimId, due: false });
      // Due again when the lease runs out: now + 60 s.
      expect(leased.nextAttemptAt!.getTime() - Date.now()).toBeGreaterThan(50_000);
    }
  } finally {
    release();
    await holder;
  }
  // Released: the next claim takes it, and still not the excluded shop's.
  expect((await claimAll(a, [shopB])).claimed.map((d) => d.id)).toEqual([ids[0]]);
  expect((await claimAll(a)).claimed.map((d) => d.id)).toEqual([other]);
});

test("a claim takes of each shop only as many as it has free slots, oldest due first, and says when it passed some over or found its limit full", async () => {
  const [capped, other, idle] = [await shop(), await shop(), await shop()];
  const ids = async (shopId: string, n: number) => {
    const made = [];
    for (let i = 0; i < n; i++) made.push(await delivery(shopId));
    // Due one after another, in the order made.
    for (const [i, id] of made.entries()) await a.updateTable("deliveries").set({ nextAttemptAt: sql<Date>`now() - ${60 - i} * interval '1 second'` }).where("id", "=", id).execute();
    return made;
  };
  const [cappedIds, otherIds, idleIds] = [await ids(capped, 3), await ids(other, 3), await ids(idle, 1)];

  // `capped` has one slot free, `other` two (perShop), `idle` two as well.
  const first = await claimDue(a, { limit: 100, perShop: 2, shopSlots: new Map([[capped, 1]]), leaseMs: 60_000 });
  expect(first.claimed.map((d) => d.id).sort()).toEqual([cappedIds[0], ...otherIds.slice(0, 2), idleIds[0]].sort());
  expect({ full: first.full, passedOver: first.passedOver }).toEqual({ full: false, passedOver: true });
  expect(new Set(first.claimed.map((d) => d.claimId)).size).toBe(1);
  // The rows passed over were only locked, not leased: still due.
  for (const id of [...cappedIds.slice(1), otherIds[2]]) expect(await row(id)).toMatchObject({ claimId: null, due: true });

  // A limit of one: the oldest due row, and more may be due.
  const second = await claimDue(a, { limit: 1, perShop: 2, shopSlots: new Map(), leaseMs: 60_000 });
  expect(second.claimed.map((d) => d.id)).toEqual([cappedIds[1]]);
  expect({ full: second.full, passedOver: second.passedOver }).toEqual({ full: true, passedOver: false });

  const rest = await claimAll(a);
  expect(rest.claimed.map((d) => d.id).sort()).toEqual([cappedIds[2], otherIds[2]].sort());
  expect({ full: rest.full, passedOver: rest.passedOver }).toEqual({ full: false, passedOver: false });
  expect(await claimAll(a)).toEqual({ claimed: [], full: false, passedOver: false });
});

test("replicas claiming at the same time take every due delivery once", async () => {
  const shops = [await shop(), await shop(), await shop()];
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) ids.push(await delivery(shops[i % 3]));
  /** Claims four at a time until a claim finds nothing (the rest leased, or locked by a claim that takes them). */
  const takeAll = async (db: NotifierDb) => {
    const taken: string[] = [];
    for (;;) {
      const { claimed } = await claimDue(db, { limit: 4, perShop: 100, shopSlots: new Map(), leaseMs: 60_000 });
      if (claimed.length === 0) return taken;
      taken.push(...claimed.map((d) => d.id));
    }
  };
  const taken = (await Promise.all([takeAll(a), takeAll(a), takeAll(b), takeAll(b)])).flat();
  expect(taken.sort()).toEqual(ids.sort());
});

test("an attempt recorded after its lease was lost is logged and leaves the delivery to the worker that took it over", async () => {
  const id = await delivery(await shop());
  const [d] = (await claimAll(a)).claimed;
  const takenOver = randomUUID();
  await a.updateTable("deliveries").set({ claimId: takenOver }).where("id", "=", id).execute();

  expect(await recordAttempt(a, d, attempt({ statusCode: 200, status: "delivered", retryInMs: undefined }))).toBeNull();
  expect(await row(id)).toMatchObject({ status: "pending", attempts: 0, claimId: takenOver });
  expect(await a.selectFrom("deliveryAttempts").select(["number", "statusCode"]).where("deliveryId", "=", id).execute()).toEqual([{ number: 1, statusCode: 200 }]);
});

test("an attempt's outcome: a retry is due after its delay; delivered has no due time", async () => {
  const shopId = await shop();
  const [retried, delivered] = [await delivery(shopId), await delivery(shopId)];
  const claimed = new Map((await claimAll(a)).claimed.map((d) => [d.id, d]));

  expect(await recordAttempt(a, claimed.get(retried)!, attempt({ retryInMs: 30_000 }))).toBe("pending");
  const afterRetry = await row(retried);
  expect(afterRetry).toMatchObject({ status: "pending", attempts: 1, claimId: null, due: false });
  expect(afterRetry.nextAttemptAt!.getTime() - Date.now()).toBeGreaterThan(20_000);

  expect(await recordAttempt(a, claimed.get(delivered)!, attempt({ statusCode: 204, status: "delivered", retryInMs: undefined }))).toBe("delivered");
  expect(await row(delivered)).toMatchObject({ status: "delivered", attempts: 1, claimId: null, nextAttemptAt: null });
});

test("a 410 disables the delivery and the endpoint only while the shop still has the URL that answered; otherwise the delivery is due again now", async () => {
  const [gone, moved] = [await shop(), await shop()];
  const [goneId, movedId] = [await delivery(gone), await delivery(moved)];
  const claimed = new Map((await claimAll(a)).claimed.map((d) => [d.id, d]));
  await b.$transaction((tx) => applyShopWebhookUrl(tx, moved, "https://merchant.example/new", new Date()));

  const gone410 = attempt({ statusCode: 410, status: "disabled", retryInMs: undefined });
  expect(await recordAttempt(a, claimed.get(goneId)!, gone410)).toBe("disabled");
  expect(await row(goneId)).toMatchObject({ status: "disabled", attempts: 1, nextAttemptAt: null });
  expect(await a.selectFrom("endpoints").select("disabled").where("shopId", "=", gone).executeTakeFirstOrThrow()).toEqual({ disabled: true });

  expect(await recordAttempt(a, claimed.get(movedId)!, gone410)).toBe("pending");
  expect(await row(movedId)).toMatchObject({ status: "pending", attempts: 1, claimId: null, due: true });
  expect(await a.selectFrom("endpoints").select("disabled").where("shopId", "=", moved).executeTakeFirstOrThrow()).toEqual({ disabled: false });
});

test("a delivery settled without an attempt goes by the endpoint as it is now: waiting without a URL, due at once when one arrived since the claim", async () => {
  const shopId = await shop();
  const [first, second] = [await delivery(shopId), await delivery(shopId)];
  await a.$transaction((tx) => applyShopWebhookUrl(tx, shopId, null, new Date()));
  const claimed = new Map<string, ClaimedDelivery>((await claimAll(a)).claimed.map((d) => [d.id, d]));
  expect(claimed.get(first)).toMatchObject({ endpointUrl: null });

  await settleWithoutAttempt(a, claimed.get(first)!, "waiting");
  expect(await row(first)).toMatchObject({ status: "pending", attempts: 0, claimId: null, nextAttemptAt: null });

  await b.$transaction((tx) => applyShopWebhookUrl(tx, shopId, "https://merchant.example/hooks", new Date()));
  // The URL's arrival woke the waiting one; the leased one it could not see becomes due as it settles.
  expect(await row(first)).toMatchObject({ status: "pending", due: true });
  await settleWithoutAttempt(a, claimed.get(second)!, "waiting");
  expect(await row(second)).toMatchObject({ status: "pending", attempts: 0, claimId: null, due: true });
});

test("the sweeps: a delivery waiting for a URL its shop has is made due; one that waited past the horizon fails", async () => {
  const withUrl = await shop();
  const without = await shop(null);
  const [stuck, stale, fresh] = [await delivery(withUrl), await delivery(without), await delivery(without)];
  // What a race between a URL arriving and a worker parking the delivery could leave behind.
  await a.updateTable("deliveries").set({ nextAttemptAt: null }).where("id", "=", stuck).execute();
  await a.updateTable("deliveries").set({ updatedAt: sql<Date>`now() - interval '2 hours'` }).where("id", "=", stale).execute();

  expect(await wakeWaitingWithUrl(a)).toBe(1);
  expect(await row(stuck)).toMatchObject({ status: "pending", due: true });
  expect(await failStaleWaiting(a, 60 * 60_000)).toBe(1);
  expect(await row(stale)).toMatchObject({ status: "failed", nextAttemptAt: null });
  expect(await row(fresh)).toMatchObject({ status: "pending", nextAttemptAt: null });
});

test("two replicas making a shop's first secret at once converge on one", async () => {
  const shopId = randomUUID();
  const [fromA, fromB] = await Promise.all([signingSecrets(a, keys, [shopId]), signingSecrets(b, keys, [shopId])]);
  expect(fromA.get(shopId)).toHaveLength(1);
  expect(fromB.get(shopId)).toEqual(fromA.get(shopId));
  const stored = await a.selectFrom("webhookSecrets").select(["secret", "expiresAt"]).where("shopId", "=", shopId).execute();
  expect(stored).toEqual([{ secret: fromA.get(shopId)![0], expiresAt: null }]);
  expect(keys.read(stored[0].secret)).toMatch(/^whsec_/);
});

test("a claim brings each delivery's signing secrets as stored: none before the first is made, then it, newest first after a rotation", async () => {
  const shopId = await shop();
  await delivery(shopId);
  const first = await claimAll(b);
  expect(first.claimed.map((d) => d.secrets)).toEqual([[]]);

  const made = (await signingSecrets(a, keys, [shopId])).get(shopId)!;
  await delivery(shopId);
  expect((await claimAll(b)).claimed.map((d) => d.secrets)).toEqual([made]);

  const rotated = await rotateSecret(a, keys, shopId);
  await delivery(shopId);
  const [{ secrets }] = (await claimAll(b)).claimed;
  expect(secrets.map((s) => keys.read(s))).toEqual([rotated, keys.read(made[0])]);
});
