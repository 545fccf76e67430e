/** The admin API's operators (Prisma Client: configuration CRUD). */
import type { Selectable } from "kysely";
import { randomUUID } from "node:crypto";
import type { Operator } from "../generated/kysely/database";
import type { Db } from "./db";

export type OperatorRow = Selectable<Operator>;

/** Prisma's code for a row a unique index already holds. */
const isUniqueViolation = (err: unknown) => (err as { code?: unknown } | null)?.code === "P2002";

/** Stores a new operator; null when an active operator has that name already. */
export async function insertOperator(db: Db, operator: { name: string; tokenHash: string; createdBy: string }) {
  try {
    return await db.operator.create({ data: { id: randomUUID(), ...operator } });
  } catch (err) {
    if (isUniqueViolation(err)) return null;
    throw err;
  }
}

export function listOperators(db: Db) {
  return db.operator.findMany({ orderBy: { createdAt: "asc" } });
}

/** Changes an active operator and answers it as changed; null when it is unknown or revoked. */
export async function changeActiveOperator(db: Db, id: string, data: { tokenHash: string } | { revokedAt: Date }) {
  const { count } = await db.operator.updateMany({ where: { id, revokedAt: null }, data });
  return count === 0 ? null : db.operator.findUniqueOrThrow({ where: { id } });
}

export function findOperatorByTokenHash(db: Db, tokenHash: string) {
  return db.operator.findUnique({ where: { tokenHash } });
}
