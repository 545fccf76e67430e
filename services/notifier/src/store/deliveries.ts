/**
 * Deliveries and their attempt log: the queue the delivery workers share (claimed `FOR UPDATE SKIP
 * LOCKED` and leased), each attempt's outcome, and the admin's listings and redeliveries. A
 * delivery's body (which holds the card number) is stored sealed under the data keys
 * (SEALED_COLUMNS): sealed here on the way in, answered as stored, and opened by the worker for
 * each attempt.
 */
import type { DataKeys } from "@pgw/kit/db";
import { currentTraceparent } from "@pgw/kit/runtime";
import { sql, type Selectable } from "kysely";
import { randomUUID } from "node:crypto";
import type { DB } from "../generated/kysely/database";
import { lockShopEndpoint, reenableEndpoint, resumeDisabledDeliveries } from "./endpoints";
import { signingSecretsOf } from "./secrets";
import { now, nowMinusMs, nowPlusMs, statusLit, wakeWorkerOnCommit, type DeliveryStatus, type NotifierDb, type NotifierSql, type NotifierTx } from "./db";

/** What the admin API shows of a delivery (never its body). */
const DELIVERY_FIELDS = ["id", "webhookId", "shopId", "operationId", "eventType", "status", "attempts", "roundAttempts", "nextAttemptAt", "claimId", "createdAt"] as const;

export interface NewDelivery {
  webhookId: string;
  shopId: string;
  operationId: string;
  eventType: string;
  /** The body as it is signed and sent (stored sealed). */
  payload: string;
}

/**
 * Records a message to deliver (inside the consumer's transaction): due now when the shop has a
 * usable endpoint, waiting (no due time) while it has no URL, `disabled` while its endpoint is
 * disabled. A second message for the same operation and status, or the same webhook-id, is
 * dropped. The row keeps the current trace context, which its attempts continue.
 */
export async function insertDelivery(tx: NotifierTx, keys: DataKeys, d: NewDelivery): Promise<void> {
  await lockShopEndpoint(tx, d.shopId, "shared");
  // One statement reads the endpoint and inserts; the workers are woken at commit when it is due now.
  const due = await tx
    .with("ep", (db) => db.selectFrom("endpoints").select(["url", "disabled"]).where("shopId", "=", d.shopId))
    .with("ins", (db) =>
      db
        .insertInto("deliveries")
        .columns(["id", "webhookId", "shopId", "operationId", "eventType", "payload", "traceparent", "status", "nextAttemptAt"])
        .expression(
          db
            // One row whether or not the shop has an endpoint yet.
            .selectFrom(db.selectNoFrom(sql.lit(1).as("one")).as("one"))
            .leftJoin("ep", (join) => join.onTrue())
            .select((eb) => [
              eb.cast<string>(eb.val(randomUUID()), "uuid").as("id"),
              eb.val(d.webhookId).as("webhookId"),
              eb.cast<string>(eb.val(d.shopId), "uuid").as("shopId"),
              eb.cast<string>(eb.val(d.operationId), "uuid").as("operationId"),
              eb.val(d.eventType).as("eventType"),
              eb.val(keys.seal(d.payload)).as("payload"),
              eb.cast<string | null>(eb.val(currentTraceparent() ?? null), "text").as("traceparent"),
              eb
                .case()
                .when(eb.and([eb("ep.url", "is not", null), eb.ref("ep.disabled").$notNull()]))
                .then(statusLit("disabled"))
                .else(statusLit("pending"))
                .end()
                .as("status"),
              eb
                .case()
                .when(eb.and([eb("ep.url", "is not", null), eb.not(eb.ref("ep.disabled").$notNull())]))
                .then(now())
                .end()
                .as("nextAttemptAt"),
            ]),
        )
        .onConflict((oc) => oc.doNothing())
        .returning("nextAttemptAt"),
    )
    .selectFrom("ins")
    .select(sql.lit(1).as("due"))
    .where("nextAttemptAt", "is not", null)
    .execute();
  if (due.length > 0) wakeWorkerOnCommit(tx);
}

/** Which due deliveries a claim may take: how many, and how many of each shop. */
export interface ClaimLimits {
  /** At most this many rows are locked (the worker's free slots). */
  limit: number;
  /** Free slots of a shop not in `shopSlots`. */
  perShop: number;
  /** Free slots of the shops that have fewer (attempts in flight, a struggling endpoint); a shop with none is left out. */
  shopSlots: ReadonlyMap<string, number>;
  /** How long the taken deliveries are leased, ms. */
  leaseMs: number;
}

/**
 * The claim's one statement. It locks up to `limit` due rows, oldest due first, of shops with a
 * free slot, `FOR UPDATE SKIP LOCKED` (replicas never take the same row, nor wait for each
 * other's); of those it keeps, per shop, the oldest as many as the shop has free slots; and it
 * leases the kept ones under `claimId`. Each row comes with its shop's endpoint, the secrets
 * that sign now (as stored, sealed) and how many rows were locked (`dueCount`).
 */
function leaseDue(db: NotifierSql, claimId: string, opts: ClaimLimits) {
  const busy = [...opts.shopSlots].filter(([, free]) => free <= 0).map(([shopId]) => shopId);
  const fewer = [...opts.shopSlots].filter(([, free]) => free > 0);
  return db
    .with(
      (cte) => cte("due").materialized(),
      (db) =>
        db
          .selectFrom("deliveries")
          .select(["id", "shopId", "nextAttemptAt"])
          .where("status", "=", statusLit("pending"))
          .where("nextAttemptAt", "<=", now())
          .where((eb) => eb.not(eb("shopId", "=", eb.fn.any(eb.val(busy)))))
          .orderBy("nextAttemptAt")
          .limit(opts.limit)
          .forUpdate()
          .skipLocked(),
    )
    .with("ranked", (db) =>
      db
        .selectFrom("due")
        .select((eb) => [
          "id",
          "shopId",
          eb.fn.agg<number>("row_number").over((ob) => ob.partitionBy("shopId").orderBy("nextAttemptAt").orderBy("id")).as("place"),
          eb.fn.countAll<bigint>().over().as("dueCount"),
        ]),
    )
    // The shops with fewer free slots than `perShop`, and how many.
    .with("slots", (db) =>
      db.selectNoFrom([sql<string>`unnest(${fewer.map(([shopId]) => shopId)}::uuid[])`.as("shopId"), sql<number>`unnest(${fewer.map(([, free]) => free)}::int[])`.as("free")]),
    )
    .updateTable("deliveries as d")
    .from("ranked as r")
    .leftJoin("slots as s", "s.shopId", "r.shopId")
    .leftJoin("endpoints as e", "e.shopId", "r.shopId")
    .set({ claimId, nextAttemptAt: nowPlusMs(opts.leaseMs) })
    .whereRef("d.id", "=", "r.id")
    .where((eb) => eb("r.place", "<=", eb.fn.coalesce("s.free", eb.val(opts.perShop))))
    .returningAll("d")
    .returning((eb) => ["e.url as endpointUrl", eb.fn.coalesce("e.disabled", eb.lit(false)).as("endpointDisabled"), signingSecretsOf(eb.ref("d.shopId")).as("secrets"), "r.dueCount"])
    .execute();
}

/** A delivery this worker leased under its claim id (its body as stored, sealed), with its shop's endpoint and the secrets that sign now (as stored, sealed). */
export type ClaimedDelivery = Omit<Awaited<ReturnType<typeof leaseDue>>[number], "dueCount" | "claimId"> & { claimId: string };

/**
 * Takes due deliveries for this worker, in one statement (see leaseDue): a worker that dies
 * mid-attempt only delays them, until their lease runs out. `full`: `limit` rows were due, so more
 * may be; `passedOver`: a shop's slots left some of them untaken. With neither, every row due to
 * this claim was taken, and another claim now would find only rows due since.
 */
export async function claimDue(db: NotifierSql, opts: ClaimLimits): Promise<{ claimed: ClaimedDelivery[]; full: boolean; passedOver: boolean }> {
  const claimId = randomUUID();
  const rows = await leaseDue(db, claimId, opts);
  // Every shop locked has a free slot, so a claim that took nothing found nothing due.
  const due = rows.length > 0 ? Number(rows[0].dueCount) : 0;
  const claimed = rows.map(({ dueCount: _, ...d }) => ({ ...d, claimId }));
  return { claimed, full: due >= opts.limit, passedOver: claimed.length < due };
}

/** The fields of a leased delivery its release, settling and attempt record need. */
type Lease = Pick<ClaimedDelivery, "id" | "claimId" | "shopId" | "attempts">;

/** Gives a leased delivery back without an attempt: due again now (e.g. the worker is stopping). */
export async function releaseClaim(db: NotifierSql, d: Lease): Promise<void> {
  await db.updateTable("deliveries").set({ claimId: null, nextAttemptAt: now() }).where("id", "=", d.id).where("claimId", "=", d.claimId).execute();
}

/**
 * Settles a leased delivery without an attempt: `waiting` (the shop has no URL: no due time until
 * one arrives) or `disabled` (its endpoint is disabled). Under the shop's endpoint lock, against the
 * endpoint as it is now: a URL that arrived, or an endpoint enabled again, since the claim read it
 * makes the delivery due again at once instead (otherwise it would miss that change's wake-up).
 */
export async function settleWithoutAttempt(db: NotifierDb, d: Lease, how: "waiting" | "disabled"): Promise<void> {
  await db.$transaction(async (tx) => {
    await lockShopEndpoint(tx, d.shopId, "shared");
    await tx
      .with("ep", (db) => db.selectFrom("endpoints").select(["url", "disabled"]).where("shopId", "=", d.shopId))
      .updateTable("deliveries")
      .set((eb) => ({
        claimId: null,
        updatedAt: now(),
        status: eb
          .case()
          .when(eb.and([eb(eb.val(how), "=", sql.lit("disabled" as const)), eb.exists(eb.selectFrom("ep").select(sql.lit(1).as("one")).where("ep.url", "is not", null).where("ep.disabled", "=", true))]))
          .then(statusLit("disabled"))
          .else(statusLit("pending"))
          .end(),
        nextAttemptAt: eb
          .case()
          .when(eb.exists(eb.selectFrom("ep").select(sql.lit(1).as("one")).where("ep.url", "is not", null).where("ep.disabled", "=", false)))
          .then(now())
          .end(),
      }))
      .where("id", "=", d.id)
      .where("claimId", "=", d.claimId)
      .execute();
  });
}

/** The result of one attempt and what it means for the delivery. */
export interface AttemptResult {
  startedAt: Date;
  statusCode?: number;
  latencyMs: number;
  snippet: string;
  error: string;
  /** The delivery's status afterwards; `pending` with `retryInMs` when retried. */
  status: DeliveryStatus;
  retryInMs?: number;
  /** The URL the attempt went to (a 410 disables the endpoint only while it still has that URL). */
  url: string;
}

/**
 * Logs an attempt and applies its outcome in one transaction. Resolves to the delivery's status
 * afterwards (`pending` also for a 410 from a URL replaced meanwhile: due again now), or null when
 * the lease had been lost (another worker took the delivery over): the attempt is logged, the
 * delivery untouched.
 */
export async function recordAttempt(db: NotifierDb, d: Lease, r: AttemptResult): Promise<DeliveryStatus | null> {
  if (r.status !== "disabled") return recordAttemptStatement(db, d, r);
  // A 410 disables the endpoint only while it still has the URL that answered; after a URL change
  // the delivery is due again at once, for the new URL. Under the endpoint lock, so a URL change
  // comes wholly before (seen here) or after (and then resumes what this parks).
  return db.$transaction(async (tx) => {
    await lockShopEndpoint(tx, d.shopId, "shared");
    return recordAttemptStatement(tx, d, r);
  });
}

async function recordAttemptStatement(db: NotifierSql, d: Lease, r: AttemptResult): Promise<DeliveryStatus | null> {
  // One statement: log, apply, and on a 410 from the current URL disable the endpoint. A 410 from
  // a URL the shop replaced meanwhile leaves the delivery pending and due now, for the new URL.
  const row = await db
    .with("currentUrl", (db) =>
      db.selectNoFrom((eb) => eb.exists(eb.selectFrom("endpoints").select(sql.lit(1).as("one")).where("shopId", "=", d.shopId).where("url", "=", r.url)).as("same")),
    )
    .with("upd", (db) =>
      db
        .updateTable("deliveries")
        .set((eb) => {
          const goneFromReplacedUrl = () => eb.and([eb(eb.val(r.status), "=", statusLit("disabled")), eb.not(eb.selectFrom("currentUrl").select("same").$asScalar())]);
          return {
            attempts: d.attempts + 1,
            roundAttempts: eb("roundAttempts", "+", eb.lit(1)),
            claimId: null,
            updatedAt: now(),
            status: eb.case().when(goneFromReplacedUrl()).then(statusLit("pending")).else(eb.val(r.status)).end(),
            // No retry (delivered, failed, disabled): no due time (now() + NULL).
            nextAttemptAt: eb
              .case()
              .when(goneFromReplacedUrl())
              .then(now())
              .else(nowPlusMs(r.retryInMs ?? null))
              .end(),
          };
        })
        .where("id", "=", d.id)
        .where("claimId", "=", d.claimId)
        .returning(["shopId", "status"]),
    )
    .with("att", (db) =>
      db.insertInto("deliveryAttempts").values({
        id: randomUUID(),
        deliveryId: d.id,
        number: d.attempts + 1,
        statusCode: r.statusCode ?? null,
        latencyMs: r.latencyMs,
        responseSnippet: r.snippet,
        error: r.error,
        at: r.startedAt,
      }),
    )
    .with("dis", (db) =>
      db
        .updateTable("endpoints")
        .set({ disabled: true, disabledAt: now(), updatedAt: now() })
        .where((eb) => eb.and([eb(eb.val(r.status), "=", statusLit("disabled")), eb("shopId", "in", eb.selectFrom("upd").select("shopId")), eb("url", "=", r.url)])),
    )
    // One row whether or not the lease held: its status, or null when another worker had taken the delivery over.
    .selectNoFrom((eb) => eb.selectFrom("upd").select("status").as("status"))
    .$narrowType<{ status: DeliveryStatus | null }>()
    .executeTakeFirstOrThrow();
  return row.status;
}

/**
 * Repairs what a race between a URL arriving and a worker parking a delivery could leave behind:
 * deliveries waiting for a URL their shop now has become due. Resolves to how many.
 */
export async function wakeWaitingWithUrl(db: NotifierSql): Promise<number> {
  const { numUpdatedRows } = await db
    .updateTable("deliveries as d")
    .from("endpoints as e")
    .set({ nextAttemptAt: now(), updatedAt: now() })
    .where("d.status", "=", statusLit("pending"))
    .where("d.nextAttemptAt", "is", null)
    .whereRef("e.shopId", "=", "d.shopId")
    .where("e.url", "is not", null)
    .executeTakeFirst();
  return Number(numUpdatedRows);
}

/**
 * Deliveries that waited for a URL longer than `horizonMs` fail (as they would have after the
 * whole retry schedule). Resolves to how many.
 */
export async function failStaleWaiting(db: NotifierSql, horizonMs: number): Promise<number> {
  const { numUpdatedRows } = await db
    .updateTable("deliveries")
    .set({ status: statusLit("failed"), updatedAt: now() })
    .where("status", "=", statusLit("pending"))
    .where("nextAttemptAt", "is", null)
    .where("updatedAt", "<", nowMinusMs(horizonMs))
    .executeTakeFirst();
  return Number(numUpdatedRows);
}

/** The attempt logs of `deliveryIds`, in attempt order. */
function attemptLogs(db: NotifierSql, deliveryIds: string[]) {
  return db
    .selectFrom("deliveryAttempts")
    .select(["deliveryId", "number", "at", "statusCode", "latencyMs", "responseSnippet", "error"])
    .where((eb) => eb("deliveryId", "=", eb.fn.any(eb.val(deliveryIds))))
    .orderBy("number")
    .orderBy("at")
    .execute();
}

/** One attempt of a delivery's log. */
export type AttemptRow = Awaited<ReturnType<typeof attemptLogs>>[number];
/** A delivery as the admin API shows it (its body stays here), with its attempt log. */
export type DeliveryWithLog = Pick<Selectable<DB["deliveries"]>, (typeof DELIVERY_FIELDS)[number]> & { attemptLog: AttemptRow[] };

async function withLogs(db: NotifierSql, deliveries: Omit<DeliveryWithLog, "attemptLog">[]): Promise<DeliveryWithLog[]> {
  if (deliveries.length === 0) return [];
  const logs = new Map<string, AttemptRow[]>();
  for (const a of await attemptLogs(db, deliveries.map((d) => d.id))) logs.set(a.deliveryId, [...(logs.get(a.deliveryId) ?? []), a]);
  return deliveries.map((d) => ({ ...d, attemptLog: logs.get(d.id) ?? [] }));
}

/** The shop's latest deliveries (of one operation, when given), newest first, each with its attempt log. */
export async function listDeliveries(db: NotifierSql, shopId: string, limit: number, operationId?: string): Promise<DeliveryWithLog[]> {
  const rows = await db
    .selectFrom("deliveries")
    .select(DELIVERY_FIELDS)
    .where("shopId", "=", shopId)
    .$if(operationId !== undefined, (qb) => qb.where("operationId", "=", operationId!))
    .orderBy("createdAt", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return withLogs(db, rows);
}

/** One delivery with its attempt log, or null. */
export async function findDelivery(db: NotifierSql, id: string): Promise<DeliveryWithLog | null> {
  const row = await db.selectFrom("deliveries").select(DELIVERY_FIELDS).where("id", "=", id).executeTakeFirst();
  return row ? (await withLogs(db, [row]))[0] : null;
}

/**
 * Schedules a delivery again now with a fresh retry schedule and the same webhook-id, and
 * re-enables its shop's endpoint when a 410 had disabled it (redelivering is the admin saying the
 * receiver is back), resuming the deliveries parked meanwhile. A delivery with an attempt in flight
 * is left as it is (`in_flight`: its outcome decides what follows).
 */
export async function redeliver(db: NotifierDb, id: string): Promise<"scheduled" | "in_flight" | "not_found"> {
  return db.$transaction(async (tx) => {
    const row = await tx.selectFrom("deliveries").select(["shopId", "claimId"]).where("id", "=", id).forUpdate().executeTakeFirst();
    if (!row) return "not_found";
    if (row.claimId !== null) return "in_flight";
    // It may enable the endpoint: ordered against parking a delivery as disabled (settleWithoutAttempt).
    await lockShopEndpoint(tx, row.shopId, "exclusive");
    await tx
      .updateTable("deliveries")
      .set({ status: statusLit("pending"), roundAttempts: 0, nextAttemptAt: now(), updatedAt: now() })
      .where("id", "=", id)
      .execute();
    if (await reenableEndpoint(tx, row.shopId)) await resumeDisabledDeliveries(tx, row.shopId);
    wakeWorkerOnCommit(tx);
    return "scheduled";
  });
}
