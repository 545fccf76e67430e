/**
 * The notifier's database access: endpoints (shop webhook URLs), signing secrets, deliveries and
 * their attempt log. Plain SQL, because the delivery queue needs `FOR UPDATE SKIP LOCKED` and the
 * consumer hands a transaction client; every function takes the kit's structural client, so it
 * runs on the kit's pg pools (createPgDb: the queue, the RPCs and the consumers' transactions); the
 * unit opens no Prisma client (prisma/schema.prisma describes the tables).
 * Rows are mapped to the types below; nothing else leaks out. Signing secrets and delivery bodies
 * (which hold card numbers) are stored sealed under the data keys (SEALED_COLUMNS): sealed here on
 * the way in, answered as stored, and opened by the worker for each attempt.
 */
import type { DataKeys, DbClient, SealedColumn, SqlClient } from "@pgw/kit";
import { randomUUID } from "node:crypto";
import { generateSecret, ROTATION_OVERLAP_MS } from "../domain/signing";
/** The columns this unit seals (kit data-keys.ts); re-sealed by DATA_RESEAL=only. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: "webhook_secrets", column: "secret" },
  { table: "deliveries", column: "payload" },
];

/** The commit channel "a delivery became due" (kit `PgDb.onCommit`): heard by this process's worker. */
export const DUE_CHANNEL = "pgw_notifier_due";

export type DeliveryStatus = "pending" | "delivered" | "failed" | "disabled";

export interface DeliveryRow {
  id: string;
  webhookId: string;
  shopId: string;
  operationId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  roundAttempts: number;
  nextAttemptAt: Date | null;
  claimId: string | null;
  createdAt: Date;
}

export interface AttemptRow {
  deliveryId: string;
  number: number;
  at: Date;
  statusCode: number | null;
  latencyMs: number;
  responseSnippet: string;
  error: string;
}

export interface EndpointRow {
  shopId: string;
  url: string | null;
  disabled: boolean;
}

const DELIVERY_COLUMNS = `"id", "webhook_id", "shop_id", "operation_id", "event_type", "status", "attempts", "round_attempts", "next_attempt_at", "claim_id", "created_at"`;

type RawDelivery = {
  id: string;
  webhook_id: string;
  shop_id: string;
  operation_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  round_attempts: number;
  next_attempt_at: Date | null;
  claim_id: string | null;
  created_at: Date;
};

const deliveryOf = (r: RawDelivery): DeliveryRow => ({
  id: r.id,
  webhookId: r.webhook_id,
  shopId: r.shop_id,
  operationId: r.operation_id,
  eventType: r.event_type,
  status: r.status,
  attempts: Number(r.attempts),
  roundAttempts: Number(r.round_attempts),
  nextAttemptAt: r.next_attempt_at,
  claimId: r.claim_id,
  createdAt: r.created_at,
});

/**
 * Wakes this process's delivery worker once `tx` commits (see main.ts). Other replicas' workers
 * find the rows at their next poll: a NOTIFY would wake them at once, but it takes a lock that
 * serialises every notifying commit of the whole Postgres server until its WAL is flushed.
 */
const wakeWorkerOnCommit = (tx: SqlClient) => void tx.wakeOnCommit?.(DUE_CHANNEL);

/**
 * Orders, per shop, a URL change against the transactions that decide whether a delivery waits for
 * a URL (new delivery, parking): a URL change takes the shop's lock exclusively, the others share
 * it (they never wait for each other). Without it a URL committed while a delivery is being
 * inserted could leave that delivery waiting.
 */
const lockShopEndpoint = (tx: SqlClient, shopId: string, mode: "shared" | "exclusive") =>
  tx.$executeRawUnsafe(
    `SELECT ${mode === "shared" ? "pg_advisory_xact_lock_shared" : "pg_advisory_xact_lock"}(hashtextextended('pgw-notifier-endpoint:' || $1::text, 0))`,
    shopId,
  );

// ---------------------------------------------------------------------------------------------
// Endpoints

/**
 * Applies a shop's webhook URL from a shop_changed event (inside the consumer's transaction). An
 * event older than the one applied last is ignored. A changed URL re-enables an endpoint disabled
 * by 410 and resumes the deliveries parked meanwhile. Deliveries waiting for a URL are scheduled
 * now once the shop has one.
 */
export async function applyShopWebhookUrl(tx: SqlClient, shopId: string, url: string | null, occurredAt: Date): Promise<void> {
  await lockShopEndpoint(tx, shopId, "exclusive");
  const current = await tx.$queryRawUnsafe<{ url: string | null; settings_at: Date }[]>(
    `SELECT "url", "settings_at" FROM "endpoints" WHERE "shop_id" = $1::uuid FOR UPDATE`,
    shopId,
  );
  if (current.length === 0) {
    const inserted = await tx.$executeRawUnsafe(
      `INSERT INTO "endpoints" ("shop_id", "url", "settings_at") VALUES ($1::uuid, $2, $3) ON CONFLICT DO NOTHING`,
      shopId,
      url,
      occurredAt,
    );
    // Another replica inserted it meanwhile: roll back; the consumer retries and takes the update path.
    if (Number(inserted) === 0) throw new Error(`endpoint of shop ${shopId} created concurrently; retrying`);
  } else {
    if (current[0].settings_at.getTime() > occurredAt.getTime()) return;
    const urlChanged = current[0].url !== url;
    await tx.$executeRawUnsafe(
      `UPDATE "endpoints" SET "url" = $2, "settings_at" = $3, "updated_at" = now()
         ${urlChanged ? `, "disabled" = false, "disabled_at" = NULL` : ""}
       WHERE "shop_id" = $1::uuid`,
      shopId,
      url,
      occurredAt,
    );
  }
  if (url === null) return;
  const woken = await tx.$executeRawUnsafe(
    `UPDATE "deliveries" SET "next_attempt_at" = now(), "updated_at" = now()
     WHERE "shop_id" = $1::uuid AND "status" = 'pending' AND "next_attempt_at" IS NULL`,
    shopId,
  );
  const resumed = current.length > 0 && current[0].url !== url ? await resumeDisabledDeliveries(tx, shopId) : 0;
  if (Number(woken) + resumed > 0) wakeWorkerOnCommit(tx);
}

/**
 * Deliveries parked while the shop's endpoint was disabled (by a 410), and the one that got the
 * 410, become due again with a fresh schedule: the endpoint is enabled again (a new URL, or an
 * admin's redelivery), and at least once means what was parked still goes out. Resolves to how many.
 */
async function resumeDisabledDeliveries(tx: SqlClient, shopId: string): Promise<number> {
  return Number(
    await tx.$executeRawUnsafe(
      `UPDATE "deliveries" SET "status" = 'pending', "round_attempts" = 0, "next_attempt_at" = now(), "updated_at" = now()
       WHERE "shop_id" = $1::uuid AND "status" = 'disabled'`,
      shopId,
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Secrets

const lockShopSecrets = (tx: SqlClient, shopId: string) =>
  tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtextextended('pgw-notifier-secret:' || $1::text, 0))`, shopId);

/**
 * Secrets that sign now, per shop, newest first, as stored (sealed): the current one and those
 * rotated out less than the overlap ago. A shop created through the admin API got its first secret there (shown in the
 * creation response); one without a current secret (the notifier was unreachable then) gets one
 * here, which the merchant learns only by rotating it through the admin API.
 */
export async function signingSecrets(db: DbClient, keys: DataKeys, shopIds: string[]): Promise<Map<string, string[]>> {
  const read = () =>
    db.$queryRawUnsafe<{ shop_id: string; secret: string; expires_at: Date | null }[]>(
      `SELECT "shop_id", "secret", "expires_at" FROM "webhook_secrets"
       WHERE "shop_id" = ANY($1::uuid[]) AND ("expires_at" IS NULL OR "expires_at" > now())
       ORDER BY "created_at" DESC, "id"`,
      shopIds,
    );
  let rows = await read();
  const withCurrent = new Set(rows.filter((r) => r.expires_at === null).map((r) => r.shop_id));
  const missing = shopIds.filter((s) => !withCurrent.has(s));
  if (missing.length > 0) {
    for (const shopId of missing) {
      await db.$transaction(async (tx) => {
        await lockShopSecrets(tx, shopId);
        await tx.$executeRawUnsafe(
          `INSERT INTO "webhook_secrets" ("id", "shop_id", "secret") VALUES ($1::uuid, $2::uuid, $3) ON CONFLICT DO NOTHING`,
          randomUUID(),
          shopId,
          keys.seal(generateSecret()),
        );
      });
    }
    rows = await read();
  }
  const byShop = new Map<string, string[]>();
  for (const r of rows) byShop.set(r.shop_id, [...(byShop.get(r.shop_id) ?? []), r.secret]);
  return byShop;
}

/**
 * Makes a new current secret for the shop and returns it. Every secret that signed until now keeps
 * signing for the overlap (24 h), so receivers can switch without dropping a message.
 */
export async function rotateSecret(db: DbClient, keys: DataKeys, shopId: string): Promise<string> {
  const secret = generateSecret();
  await db.$transaction(async (tx) => {
    await lockShopSecrets(tx, shopId);
    await tx.$executeRawUnsafe(
      `UPDATE "webhook_secrets" SET "expires_at" = now() + $2::float8 * interval '1 millisecond' WHERE "shop_id" = $1::uuid AND "expires_at" IS NULL`,
      shopId,
      ROTATION_OVERLAP_MS,
    );
    await tx.$executeRawUnsafe(`INSERT INTO "webhook_secrets" ("id", "shop_id", "secret") VALUES ($1::uuid, $2::uuid, $3)`, randomUUID(), shopId, keys.seal(secret));
  });
  return secret;
}

// ---------------------------------------------------------------------------------------------
// Deliveries

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
 * dropped. Resolves to false when nothing was inserted.
 */
export async function insertDelivery(tx: SqlClient, keys: DataKeys, d: NewDelivery): Promise<void> {
  await lockShopEndpoint(tx, d.shopId, "shared");
  // One statement reads the endpoint and inserts; the workers are woken at commit when it is due now.
  const due = await tx.$queryRawUnsafe<unknown[]>(
    `WITH ep AS (SELECT "url", "disabled" FROM "endpoints" WHERE "shop_id" = $3::uuid),
     ins AS (
       INSERT INTO "deliveries" ("id", "webhook_id", "shop_id", "operation_id", "event_type", "payload", "status", "next_attempt_at")
       SELECT $1::uuid, $2, $3::uuid, $4::uuid, $5, $6,
              CASE WHEN ep."url" IS NOT NULL AND ep."disabled" THEN 'disabled' ELSE 'pending' END,
              CASE WHEN ep."url" IS NOT NULL AND NOT ep."disabled" THEN now() END
       FROM (SELECT 1) AS one LEFT JOIN ep ON true
       ON CONFLICT DO NOTHING
       RETURNING "next_attempt_at"
     )
     SELECT 1 FROM ins WHERE "next_attempt_at" IS NOT NULL`,
    randomUUID(),
    d.webhookId,
    d.shopId,
    d.operationId,
    d.eventType,
    keys.seal(d.payload),
  );
  if (due.length > 0) wakeWorkerOnCommit(tx);
}

/** A leased delivery with its body as stored (sealed) and what its attempt needs to know about the shop's endpoint. */
export interface ClaimedDelivery extends DeliveryRow {
  payload: string;
  endpointUrl: string | null;
  endpointDisabled: boolean;
}

/**
 * Takes due deliveries for this worker: locks up to `limit` due rows of shops not in
 * `excludeShops` with `FOR UPDATE SKIP LOCKED` (replicas never take the same row), lets `choose`
 * keep some (per-shop caps), and leases the kept ones: their due time moves to the lease expiry
 * and they get a claim id, so a worker that dies mid-attempt only delays them. `full`: `limit` rows
 * were due, so more may be; `passedOver`: `choose` left some due rows untaken. With neither, every
 * row due to this claim was taken, and another claim now would find only rows due since.
 */
export async function claimDue(
  db: DbClient,
  opts: { limit: number; excludeShops: string[]; leaseMs: number; choose: (rows: ClaimedDelivery[]) => ClaimedDelivery[] },
): Promise<{ claimed: ClaimedDelivery[]; full: boolean; passedOver: boolean }> {
  return db.$transaction(async (tx) => {
    const due = (
      await tx.$queryRawUnsafe<(RawDelivery & { payload: string; endpoint_url: string | null; endpoint_disabled: boolean | null })[]>(
        `SELECT ${DELIVERY_COLUMNS.replace(/"(\w+)"/g, 'd."$1"')}, d."payload", e."url" AS "endpoint_url", e."disabled" AS "endpoint_disabled"
         FROM "deliveries" d LEFT JOIN "endpoints" e ON e."shop_id" = d."shop_id"
         WHERE d."status" = 'pending' AND d."next_attempt_at" <= now() AND NOT (d."shop_id" = ANY($1::uuid[]))
         ORDER BY d."next_attempt_at" LIMIT $2
         FOR UPDATE OF d SKIP LOCKED`,
        opts.excludeShops,
        opts.limit,
      )
    ).map((r) => ({ ...deliveryOf(r), payload: r.payload, endpointUrl: r.endpoint_url, endpointDisabled: r.endpoint_disabled === true }));
    const chosen = opts.choose(due);
    const full = due.length >= opts.limit;
    const passedOver = chosen.length < due.length;
    if (chosen.length === 0) return { claimed: [], full, passedOver };
    const claimId = randomUUID();
    await tx.$executeRawUnsafe(
      `UPDATE "deliveries" SET "claim_id" = $2::uuid, "next_attempt_at" = now() + $3::float8 * interval '1 millisecond'
       WHERE "id" = ANY($1::uuid[])`,
      chosen.map((d) => d.id),
      claimId,
      opts.leaseMs,
    );
    return { claimed: chosen.map((d) => ({ ...d, claimId })), full, passedOver };
  });
}

/** Gives a leased delivery back without an attempt: due again now (e.g. the worker is stopping). */
export async function releaseClaim(db: SqlClient, d: DeliveryRow): Promise<void> {
  await db.$executeRawUnsafe(
    `UPDATE "deliveries" SET "claim_id" = NULL, "next_attempt_at" = now() WHERE "id" = $1::uuid AND "claim_id" = $2::uuid`,
    d.id,
    d.claimId,
  );
}

/**
 * Settles a leased delivery without an attempt: `waiting` (the shop has no URL: no due time until
 * one arrives) or `disabled` (its endpoint is disabled). Under the shop's endpoint lock, against the
 * endpoint as it is now: a URL that arrived, or an endpoint enabled again, since the claim read it
 * makes the delivery due again at once instead (otherwise it would miss that change's wake-up).
 */
export async function settleWithoutAttempt(db: DbClient, d: DeliveryRow, how: "waiting" | "disabled"): Promise<void> {
  await db.$transaction(async (tx) => {
    await lockShopEndpoint(tx, d.shopId, "shared");
    await tx.$executeRawUnsafe(
      `WITH ep AS (SELECT "url", "disabled" FROM "endpoints" WHERE "shop_id" = $3::uuid)
       UPDATE "deliveries" SET "claim_id" = NULL, "updated_at" = now(),
         "status" = CASE WHEN $4 = 'disabled' AND EXISTS (SELECT 1 FROM ep WHERE ep."url" IS NOT NULL AND ep."disabled") THEN 'disabled' ELSE 'pending' END,
         "next_attempt_at" = CASE WHEN EXISTS (SELECT 1 FROM ep WHERE ep."url" IS NOT NULL AND NOT ep."disabled") THEN now() END
       WHERE "id" = $1::uuid AND "claim_id" = $2::uuid`,
      d.id,
      d.claimId,
      d.shopId,
      how,
    );
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
export async function recordAttempt(db: DbClient, d: DeliveryRow, r: AttemptResult): Promise<DeliveryStatus | null> {
  if (r.status !== "disabled") return recordAttemptStatement(db, d, r);
  // A 410 disables the endpoint only while it still has the URL that answered; after a URL change
  // the delivery is due again at once, for the new URL. Under the endpoint lock, so a URL change
  // comes wholly before (seen here) or after (and then resumes what this parks).
  return db.$transaction(async (tx) => {
    await lockShopEndpoint(tx, d.shopId, "shared");
    return recordAttemptStatement(tx, d, r);
  });
}

async function recordAttemptStatement(db: SqlClient, d: DeliveryRow, r: AttemptResult): Promise<DeliveryStatus | null> {
  // One statement: log, apply, and on a 410 from the current URL disable the endpoint.
  const [row] = await db.$queryRawUnsafe<{ status: DeliveryStatus | null }[]>(
    `WITH current_url AS (SELECT EXISTS (SELECT 1 FROM "endpoints" WHERE "shop_id" = $13::uuid AND "url" = $12) AS "same"),
     upd AS (
       UPDATE "deliveries" SET "attempts" = $4, "round_attempts" = "round_attempts" + 1, "claim_id" = NULL, "updated_at" = now(),
         "status" = CASE WHEN $3 = 'disabled' AND NOT (SELECT "same" FROM current_url) THEN 'pending' ELSE $3 END,
         "next_attempt_at" = CASE
           WHEN $3 = 'disabled' AND NOT (SELECT "same" FROM current_url) THEN now()
           WHEN $5::float8 IS NULL THEN NULL
           ELSE now() + $5::float8 * interval '1 millisecond' END
       WHERE "id" = $1::uuid AND "claim_id" = $2::uuid
       RETURNING "shop_id", "status"
     ),
     att AS (
       INSERT INTO "delivery_attempts" ("id", "delivery_id", "number", "status_code", "latency_ms", "response_snippet", "error", "at")
       VALUES ($6::uuid, $1::uuid, $4, $7, $8, $9, $10, $11)
     ),
     dis AS (
       UPDATE "endpoints" SET "disabled" = true, "disabled_at" = now(), "updated_at" = now()
       WHERE $3 = 'disabled' AND "shop_id" IN (SELECT "shop_id" FROM upd) AND "url" = $12
     )
     SELECT (SELECT "status" FROM upd) AS "status"`,
    d.id,
    d.claimId,
    r.status,
    d.attempts + 1,
    r.retryInMs ?? null,
    randomUUID(),
    r.statusCode ?? null,
    r.latencyMs,
    r.snippet,
    r.error,
    r.startedAt,
    r.url,
    d.shopId,
  );
  return row?.status ?? null;
}

/**
 * Repairs what a race between a URL arriving and a worker parking a delivery could leave behind:
 * deliveries waiting for a URL their shop now has become due. Resolves to how many.
 */
export async function wakeWaitingWithUrl(db: SqlClient): Promise<number> {
  return Number(
    await db.$executeRawUnsafe(
      `UPDATE "deliveries" d SET "next_attempt_at" = now(), "updated_at" = now()
       FROM "endpoints" e
       WHERE d."status" = 'pending' AND d."next_attempt_at" IS NULL AND e."shop_id" = d."shop_id" AND e."url" IS NOT NULL`,
    ),
  );
}

/**
 * Deliveries that waited for a URL longer than `horizonMs` fail (as they would have after the
 * whole retry schedule). Resolves to how many.
 */
export async function failStaleWaiting(db: SqlClient, horizonMs: number): Promise<number> {
  return Number(
    await db.$executeRawUnsafe(
      `UPDATE "deliveries" SET "status" = 'failed', "updated_at" = now()
       WHERE "status" = 'pending' AND "next_attempt_at" IS NULL AND "updated_at" < now() - $1::float8 * interval '1 millisecond'`,
      horizonMs,
    ),
  );
}

/** A delivery with its attempt log. */
export interface DeliveryWithLog extends DeliveryRow {
  attemptLog: AttemptRow[];
}

async function withLogs(db: SqlClient, deliveries: DeliveryRow[]): Promise<DeliveryWithLog[]> {
  if (deliveries.length === 0) return [];
  const rows = await db.$queryRawUnsafe<
    { delivery_id: string; number: number; at: Date; status_code: number | null; latency_ms: number; response_snippet: string; error: string }[]
  >(
    `SELECT "delivery_id", "number", "at", "status_code", "latency_ms", "response_snippet", "error"
     FROM "delivery_attempts" WHERE "delivery_id" = ANY($1::uuid[]) ORDER BY "number", "at"`,
    deliveries.map((d) => d.id),
  );
  const logs = new Map<string, AttemptRow[]>();
  for (const r of rows) {
    const list = logs.get(r.delivery_id) ?? [];
    list.push({
      deliveryId: r.delivery_id,
      number: Number(r.number),
      at: r.at,
      statusCode: r.status_code === null ? null : Number(r.status_code),
      latencyMs: Number(r.latency_ms),
      responseSnippet: r.response_snippet,
      error: r.error,
    });
    logs.set(r.delivery_id, list);
  }
  return deliveries.map((d) => ({ ...d, attemptLog: logs.get(d.id) ?? [] }));
}

/** The shop's latest deliveries, newest first, each with its attempt log. */
export async function listDeliveries(db: SqlClient, shopId: string, limit: number): Promise<DeliveryWithLog[]> {
  const rows = await db.$queryRawUnsafe<RawDelivery[]>(
    `SELECT ${DELIVERY_COLUMNS} FROM "deliveries" WHERE "shop_id" = $1::uuid ORDER BY "created_at" DESC, "id" DESC LIMIT $2`,
    shopId,
    limit,
  );
  return withLogs(db, rows.map(deliveryOf));
}

/** One delivery with its attempt log, or null. */
export async function findDelivery(db: SqlClient, id: string): Promise<DeliveryWithLog | null> {
  const rows = await db.$queryRawUnsafe<RawDelivery[]>(`SELECT ${DELIVERY_COLUMNS} FROM "deliveries" WHERE "id" = $1::uuid`, id);
  return rows.length ? (await withLogs(db, [deliveryOf(rows[0])]))[0] : null;
}

/**
 * Schedules a delivery again now with a fresh retry schedule and the same webhook-id, and
 * re-enables its shop's endpoint when a 410 had disabled it (redelivering is the admin saying the
 * receiver is back), resuming the deliveries parked meanwhile. A delivery with an attempt in flight
 * is left as it is (`in_flight`: its outcome decides what follows).
 */
export async function redeliver(db: DbClient, id: string): Promise<"scheduled" | "in_flight" | "not_found"> {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRawUnsafe<{ shop_id: string; claim_id: string | null }[]>(
      `SELECT "shop_id", "claim_id" FROM "deliveries" WHERE "id" = $1::uuid FOR UPDATE`,
      id,
    );
    if (rows.length === 0) return "not_found";
    if (rows[0].claim_id !== null) return "in_flight";
    // It may enable the endpoint: ordered against parking a delivery as disabled (settleWithoutAttempt).
    await lockShopEndpoint(tx, rows[0].shop_id, "exclusive");
    await tx.$executeRawUnsafe(
      `UPDATE "deliveries" SET "status" = 'pending', "round_attempts" = 0, "next_attempt_at" = now(), "updated_at" = now() WHERE "id" = $1::uuid`,
      id,
    );
    const reenabled = await tx.$executeRawUnsafe(
      `UPDATE "endpoints" SET "disabled" = false, "disabled_at" = NULL, "updated_at" = now() WHERE "shop_id" = $1::uuid AND "disabled"`,
      rows[0].shop_id,
    );
    if (Number(reenabled) > 0) await resumeDisabledDeliveries(tx, rows[0].shop_id);
    wakeWorkerOnCommit(tx);
    return "scheduled";
  });
}
