import { createPrismaClient, formatRequestAmount, Money } from "@pgw/kit";
import type { PlannedLeg } from "./domain/evidence";
import type { Method } from "./domain/methods";
import type { OperationKind, OperationStatus } from "./domain/operation-state";
import type { Requisites } from "./domain/requisites";
import { defaultScenario, type Scenario, type EvidenceMode } from "./domain/scenario";
import { PrismaClient } from "./generated/prisma/client";
import type { ReceiptFacts } from "./receipt-pdf";
import type { SandboxOperation, SandboxScenario } from "./generated/prisma/client";

export type Db = PrismaClient;

/** The sandbox provider's database client (Prisma on the pg adapter). */
export function createDb(url: string): Db {
  return createPrismaClient(PrismaClient, url);
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
}

/** What a create stores; the operation starts `created`. */
export type NewOperation = Omit<StoredOperation, "status" | "paidAmount" | "evidence">;

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
const UNIQUE_VIOLATION = "P2002";
/** A Buffer as the Uint8Array a Bytes column takes. */

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

/** Prisma access of the sandbox; every method maps rows to domain values. */
export function createStore(db: Db) {
  const byOperationId = async (operationId: string) => {
    const row = await db.sandboxOperation.findUnique({ where: { operationId } });
    return row && toOperation(row);
  };

  return {
    byOperationId,

    async byReference(reference: string): Promise<StoredOperation | null> {
      const row = await db.sandboxOperation.findUnique({ where: { reference } });
      return row && toOperation(row);
    },

    /** Inserts the operation; when its operation_id exists already, answers the stored one. */
    async create(op: NewOperation): Promise<{ operation: StoredOperation; created: boolean }> {
      const data = { ...op, amount: op.amount.toFixed(2), requisites: JSON.stringify(op.requisites), status: "created" };
      try {
        return { operation: toOperation(await db.sandboxOperation.create({ data })), created: true };
      } catch (err) {
        const existing = (err as { code?: string }).code === UNIQUE_VIOLATION ? await byOperationId(op.operationId) : null;
        if (!existing) throw err;
        return { operation: existing, created: false };
      }
    },

    /**
     * Moves a `created` operation to `change.to` with its legs and receipts, in one transaction.
     * The update is conditional on `created` (compare-and-set), so of two racing changes one wins;
     * answers false for the loser.
     */
    async complete(reference: string, change: Completion): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const { count } = await tx.sandboxOperation.updateMany({
          where: { reference, status: "created" },
          data: { status: change.to, paidAmount: change.paidAmount?.toFixed(2), evidence: change.evidence, updatedAt: new Date() },
        });
        if (count !== 1) return false;
        for (const leg of change.legs ?? []) {
          await tx.sandboxLeg.create({
            data: { id: leg.id, reference, position: leg.position, amount: leg.amount.toFixed(2), legacy: leg.legacy, completedAt: leg.completedAt },
          });
          await tx.sandboxEvidenceItem.createMany({
            data: leg.items.map((item, position) => ({
              id: item.id,
              legId: leg.id,
              position,
              amount: item.amount.toFixed(2),
              completedAt: item.completedAt,
            })),
          });
        }
        return true;
      });
    },

    /** References of `created` operations whose requisites lapsed by `now` (oldest first). */
    async dueForExpiry(now: Date, limit = 100): Promise<string[]> {
      const rows = await db.sandboxOperation.findMany({
        where: { status: "created", expiresAt: { lte: now } },
        select: { reference: true },
        orderBy: { expiresAt: "asc" },
        take: limit,
      });
      return rows.map((r) => r.reference);
    },

    /** The legs of an operation with their items, in order. */
    async legs(reference: string): Promise<StoredLeg[]> {
      const rows = await db.sandboxLeg.findMany({
        where: { reference },
        orderBy: { position: "asc" },
        include: { items: { orderBy: { position: "asc" } } },
      });
      return rows.map((leg) => ({
        id: leg.id,
        amount: money(leg.amount),
        completedAt: leg.completedAt,
        legacy: leg.legacy,
        // Every item's receipt can be rendered (legacy legs have no items).
        items: leg.items.map((item) => ({ id: item.id, amount: money(item.amount), completedAt: item.completedAt, hasFile: true })),
      }));
    },

    /** What an evidence item's receipt states; null when there is no such item. */
    async receiptFacts(itemId: string): Promise<ReceiptFacts | null> {
      const row = await db.sandboxEvidenceItem.findUnique({ where: { id: itemId }, include: { leg: { include: { operation: true } } } });
      if (!row) return null;
      const op = toOperation(row.leg.operation);
      return { amount: `${formatRequestAmount(money(row.amount))} ${op.currency}`, recipient: op.requisites.number, reference: op.reference, itemId: row.id, completedAt: row.completedAt };
    },

    /** The scenario in force for `method` (the default when none is stored). */
    async scenario(method: Method): Promise<Scenario> {
      const row = await db.sandboxScenario.findUnique({ where: { method } });
      return row ? toScenario(row) : defaultScenario(method);
    },

    /** Stores (replaces) the scenario of its method. */
    async putScenario(s: Scenario): Promise<Scenario> {
      const data = { ...s, updatedAt: new Date() };
      return toScenario(await db.sandboxScenario.upsert({ where: { method: s.method }, create: data, update: data }));
    },

    /** Forgets every stored scenario: every method is back to the default. */
    async resetScenarios(): Promise<void> {
      await db.sandboxScenario.deleteMany({});
    },
  };
}

/** The sandbox's store (see {@link createStore}). */
export type Store = ReturnType<typeof createStore>;
