import { PrismaPg } from "@prisma/adapter-pg";
import type pg from "pg";

/**
 * Builds a service's generated PrismaClient on the pg driver adapter (no query engine binary), over
 * the unit's own pool (`PgDb.pool`): one pool per unit, whatever runs the statement. The adapter
 * parses its rows itself, so the pool's type parsers (pg-db.ts) do not reach Prisma's answers.
 */
export function createPrismaClient<T>(PrismaClient: new (options: { adapter: PrismaPg }) => T, pool: pg.Pool): T {
  return new PrismaClient({ adapter: new PrismaPg(pool) });
}
