import { createPgDb, formatExact, Money, NotifiedCache, type KitLog, type PgDb, type PgListener } from "@pgw/kit";
import type { PlannedLeg } from "./domain/evidence";
import type { Method } from "./domain/methods";
import type { OperationKind, OperationStatus } from "./domain/operation-state";
import type { Requisites } from "./domain/requisites";
import { defaultScenario, type Scenario, type EvidenceMode } from "./domain/scenario";
import type { ReceiptFacts } from "./receipt-pdf";
import type { SandboxOperation, SandboxScenario } from "./generated/prisma/client";

export type Db = PgDb;

/**
 * The sandbox provider's database client: the kit's pg pool, since every access is one SQL
 * statement (the schema and migrations are Prisma's; its generated types name the rows). Commits
 * are asynchronous: the sandbox is a test double whose state a Postgres crash may roll back by a
 * moment without harm, and benchmarks then measure our durable commits, not a provider's.
 */
export function createDb(url: string): Db {
  return createPgDb(url, 10, { asyncCommit: true });
}

/** An operation as the sandbox knows it (domain view of a `sandbox_operations` row). */
export interface StoredOperation {
  reference: string;
  operationId: string;
  kind: OperationKind;
  method: Method;
  amount: Money;
  currency: string;
  status: OperationStatus;
  paidAmount: Money | null;
  /** Requisites handed out (payin) or the destination (payout). */
  requisites: Requisites;
  requiresReceipt: boolean;
  callbackUrl: string;
  evidence: EvidenceMode;
  expiresAt: Date | null;
  createdAt: Date;
}

/** What a create stores; the operation starts `created`. */
export type NewOperation = Omit<StoredOperation, "status" | "paidAmount" | "evidence" | "createdAt">;

/** A status change, with what a pay / settle adds. */
export interface Completion {
  to: OperationStatus;
  paidAmount?: Money;
  evidence?: EvidenceMode;
  legs?: PlannedLeg[];
}

/** An evidence item as read back, without its file. */
export interface StoredItem {
  id: string;
  amount: Money;
  completedAt: Date;
  hasFile: boolean;
}

/** A leg as read back with its items. */
export interface StoredLeg {
  id: string;
  amount: Money;
  completedAt: Date;
  legacy: boolean;
  items: StoredItem[];
}

const money = (d: { toFixed(): string }) => new Money(d.toFixed());
/** A Date as a `timestamptz` parameter (null stays null). */
const ts = (d: Date | null | undefined) => (d ? d.toISOString() : null);

// Hot paths use SQL (one statement each) rather than the ORM, whose query compiler and result
// mapping cost more CPU than the query itself; the aliases give back the model's shape (numeric
// columns arrive as Decimal, timestamptz as Date, as with the ORM).
const OPERATION_COLUMNS = `reference, operation_id::text AS "operationId", kind, method, amount, currency, status,
  paid_amount AS "paidAmount", requisites, requires_receipt AS "requiresReceipt", callback_url AS "callbackUrl", evidence,
  expires_at AS "expiresAt", created_at AS "createdAt", updated_at AS "updatedAt"`;
const SCENARIO_COLUMNS = `method, accept, accept_delay_ms AS "acceptDelayMs", requires_receipt AS "requiresReceipt", evidence,
  expires_in_s AS "expiresInS", updated_at AS "updatedAt"`;

async function oneRow<T>(db: Db, query: string, ...values: unknown[]): Promise<T | null> {
  const rows = await db.$queryRawUnsafe<T[]>(query, ...values);
  return rows[0] ?? null;
}

async function oneOperation(db: Db, query: string, ...values: unknown[]): Promise<StoredOperation | null> {
  const row = await oneRow<SandboxOperation>(db, query, ...values);
  return row && toOperation(row);
}

function toOperation(row: SandboxOperation): StoredOperation {
  return {
    reference: row.reference,
    operationId: row.operationId,
    kind: row.kind as OperationKind,
    method: row.method as Method,
    amount: money(row.amount),
    currency: row.currency,
    status: row.status as OperationStatus,
    paidAmount: row.paidAmount === null ? null : money(row.paidAmount),
    requisites: JSON.parse(row.requisites) as Requisites,
    requiresReceipt: row.requiresReceipt,
    callbackUrl: row.callbackUrl,
    evidence: row.evidence as EvidenceMode,
    expiresAt: row.expiresAt,
    createdAt: row.createdAt,
  };
}

function toScenario(row: SandboxScenario): Scenario {
  return {
    method: row.method as Method,
    accept: row.accept as Scenario["accept"],
    acceptDelayMs: row.acceptDelayMs,
    requiresReceipt: row.requiresReceipt,
    evidence: row.evidence as EvidenceMode,
    expiresInS: row.expiresInS,
  };
}

/** A leg joined with one of its items (item columns null for a leg without items). */
interface LegItemRow {
  id: string;
  amount: { toFixed(): string };
  completedAt: Date;
  legacy: boolean;
  itemId: string | null;
  itemAmount: { toFixed(): string } | null;
  itemCompletedAt: Date | null;
}

/** The NOTIFY channel on which a scenario change tells every sandbox replica to drop its cached scenarios. */
export const SCENARIO_CHANNEL = "sandbox_scenarios";

/**
 * SQL access of the sandbox; every method maps rows to domain values. Scenarios are cached in the
 * process (every create and every pay reads one, and they change only through the control API):
 * a change replaces the cached one here and is announced on {@link SCENARIO_CHANNEL} to the others.
 */
export function createStore(db: Db) {
  const scenarios = new NotifiedCache<Method, Scenario>();
  const byOperationId = (operationId: string) =>
    oneOperation(db, `SELECT ${OPERATION_COLUMNS} FROM sandbox_operations WHERE operation_id = $1::uuid`, operationId);

  return {
    byOperationId,

    byReference(reference: string): Promise<StoredOperation | null> {
      return oneOperation(db, `SELECT ${OPERATION_COLUMNS} FROM sandbox_operations WHERE reference = $1`, reference);
    },

    /** Inserts the operation; when its operation_id exists already, answers the stored one. */
    async create(op: NewOperation): Promise<{ operation: StoredOperation; created: boolean }> {
      const inserted = await oneOperation(
        db,
        `INSERT INTO sandbox_operations (reference, operation_id, kind, method, amount, currency, status, requisites, requires_receipt, callback_url, expires_at)
         VALUES ($1, $2::uuid, $3, $4, $5::numeric, $6, 'created', $7, $8::boolean, $9, $10::timestamptz)
         ON CONFLICT (operation_id) DO NOTHING
         RETURNING ${OPERATION_COLUMNS}`,
        op.reference,
        op.operationId,
        op.kind,
        op.method,
        op.amount.toFixed(2),
        op.currency,
        JSON.stringify(op.requisites),
        op.requiresReceipt,
        op.callbackUrl,
        ts(op.expiresAt),
      );
      if (inserted) return { operation: inserted, created: true };
      const existing = await byOperationId(op.operationId);
      if (!existing) throw new Error(`operation ${op.operationId} conflicted on insert but cannot be read back`);
      return { operation: existing, created: false };
    },

    /**
     * Moves a `created` operation to `change.to` with its legs and receipts, in one statement (so
     * one transaction). The update is conditional on `created` (compare-and-set), so of two racing
     * changes one wins; answers false for the loser (and then nothing is inserted).
     */
    async complete(reference: string, change: Completion): Promise<boolean> {
      const legs = change.legs ?? [];
      const items = legs.flatMap((leg) => leg.items.map((item, position) => ({ ...item, legId: leg.id, position })));
      const rows = await db.$queryRawUnsafe<{ n: number }[]>(
        `WITH u AS (
           UPDATE sandbox_operations
              SET status = $2, paid_amount = COALESCE($3::numeric, paid_amount), evidence = COALESCE($4, evidence), updated_at = $5::timestamptz
            WHERE reference = $1 AND status = 'created'
            RETURNING reference),
         l AS (
           INSERT INTO sandbox_legs (id, reference, position, amount, legacy, completed_at)
           SELECT t.id, u.reference, t.position, t.amount, t.legacy, t.completed_at
             FROM u, unnest($6::uuid[], $7::int[], $8::numeric[], $9::boolean[], $10::timestamptz[]) AS t(id, position, amount, legacy, completed_at)),
         i AS (
           INSERT INTO sandbox_evidence_items (id, leg_id, position, amount, completed_at)
           SELECT t.id, t.leg_id, t.position, t.amount, t.completed_at
             FROM u, unnest($11::uuid[], $12::uuid[], $13::int[], $14::numeric[], $15::timestamptz[]) AS t(id, leg_id, position, amount, completed_at))
         SELECT count(*)::int AS n FROM u`,
        reference,
        change.to,
        change.paidAmount?.toFixed() ?? null,
        change.evidence ?? null,
        new Date().toISOString(),
        legs.map((l) => l.id),
        legs.map((l) => l.position),
        legs.map((l) => l.amount.toFixed()),
        legs.map((l) => l.legacy),
        legs.map((l) => l.completedAt.toISOString()),
        items.map((i) => i.id),
        items.map((i) => i.legId),
        items.map((i) => i.position),
        items.map((i) => i.amount.toFixed()),
        items.map((i) => i.completedAt.toISOString()),
      );
      return rows[0]?.n === 1;
    },

    /** References of `created` operations whose requisites lapsed by `now` (oldest first). */
    async dueForExpiry(now: Date, limit = 100): Promise<string[]> {
      const rows = await db.$queryRawUnsafe<{ reference: string }[]>(
        `SELECT reference FROM sandbox_operations WHERE status = 'created' AND expires_at <= $1::timestamptz ORDER BY expires_at LIMIT $2::int`,
        now.toISOString(),
        limit,
      );
      return rows.map((r) => r.reference);
    },

    /**
     * The legs of an operation with their items, in order (one statement). Each leg's items are
     * read through the (leg_id, position) index by a LATERAL subquery (OFFSET 0 keeps the planner
     * from flattening it into a join): without table statistics (a Postgres without autovacuum) the
     * plain join was planned as a hash over a scan of every item, growing with the table.
     */
    async legs(reference: string): Promise<StoredLeg[]> {
      const rows = await db.$queryRawUnsafe<LegItemRow[]>(
        `SELECT l.id::text, l.amount, l.completed_at AS "completedAt", l.legacy,
                i.id::text AS "itemId", i.amount AS "itemAmount", i.completed_at AS "itemCompletedAt"
           FROM sandbox_legs l
           LEFT JOIN LATERAL (SELECT id, amount, completed_at, position FROM sandbox_evidence_items WHERE leg_id = l.id OFFSET 0) i ON true
          WHERE l.reference = $1
          ORDER BY l.position, i.position`,
        reference,
      );
      const legs: StoredLeg[] = [];
      for (const r of rows) {
        let leg = legs[legs.length - 1];
        if (!leg || leg.id !== r.id) {
          leg = { id: r.id, amount: money(r.amount), completedAt: r.completedAt, legacy: r.legacy, items: [] };
          legs.push(leg);
        }
        // Every item's receipt can be rendered (legacy legs have no items).
        if (r.itemId !== null) leg.items.push({ id: r.itemId, amount: money(r.itemAmount!), completedAt: r.itemCompletedAt!, hasFile: true });
      }
      return legs;
    },

    /** What an evidence item's receipt states; null when there is no such item. */
    async receiptFacts(itemId: string): Promise<ReceiptFacts | null> {
      const row = await oneRow<{ itemId: string; itemAmount: { toFixed(): string }; itemCompletedAt: Date; currency: string; requisites: string }>(
        db,
        `SELECT i.id::text AS "itemId", i.amount AS "itemAmount", i.completed_at AS "itemCompletedAt", o.currency, o.requisites
           FROM sandbox_evidence_items i JOIN sandbox_legs l ON l.id = i.leg_id JOIN sandbox_operations o ON o.reference = l.reference
          WHERE i.id = $1::uuid`,
        itemId,
      );
      if (!row) return null;
      const requisites = JSON.parse(row.requisites) as Requisites;
      return { amount: `${formatExact(money(row.itemAmount))} ${row.currency}`, recipient: requisites.number, itemId: row.itemId, completedAt: row.itemCompletedAt };
    },

    /** The scenario in force for `method` (the default when none is stored). */
    scenario(method: Method): Promise<Scenario> {
      return scenarios.get(method, async () => {
        const row = await oneRow<SandboxScenario>(db, `SELECT ${SCENARIO_COLUMNS} FROM sandbox_scenarios WHERE method = $1`, method);
        return row ? toScenario(row) : defaultScenario(method);
      });
    },

    /** Starts caching scenarios, listening for other replicas' changes; stop it at shutdown. */
    listenForScenarioChanges(databaseUrl: string, log: KitLog): PgListener {
      return scenarios.listen(databaseUrl, SCENARIO_CHANNEL, log);
    },

    /** Stores (replaces) the scenario of its method. */
    async putScenario(s: Scenario): Promise<Scenario> {
      const row = await oneRow<SandboxScenario>(
        db,
        `WITH stored AS (
           INSERT INTO sandbox_scenarios (method, accept, accept_delay_ms, requires_receipt, evidence, expires_in_s, updated_at)
           VALUES ($1, $2, $3::int, $4::boolean, $5, $6::int, $7::timestamptz)
           ON CONFLICT (method) DO UPDATE SET accept = EXCLUDED.accept, accept_delay_ms = EXCLUDED.accept_delay_ms,
             requires_receipt = EXCLUDED.requires_receipt, evidence = EXCLUDED.evidence, expires_in_s = EXCLUDED.expires_in_s, updated_at = EXCLUDED.updated_at
           RETURNING ${SCENARIO_COLUMNS})
         SELECT stored.*, pg_notify('${SCENARIO_CHANNEL}', '') FROM stored`,
        s.method,
        s.accept,
        s.acceptDelayMs,
        s.requiresReceipt,
        s.evidence,
        s.expiresInS,
        new Date().toISOString(),
      );
      const scenario = toScenario(row!);
      scenarios.set(scenario.method, scenario);
      return scenario;
    },

    /** Forgets every stored scenario: every method is back to the default. */
    async resetScenarios(): Promise<void> {
      await db.$executeRawUnsafe(`WITH gone AS (DELETE FROM sandbox_scenarios) SELECT pg_notify('${SCENARIO_CHANNEL}', '')`);
      scenarios.forget();
    },
  };
}

/** The sandbox's store (see {@link createStore}). */
export type Store = ReturnType<typeof createStore>;
