import { PrismaPg } from "@prisma/adapter-pg";

/**
 * Builds a service's generated PrismaClient on the pg driver adapter (no query engine binary).
 * `connectionTimeoutMillis` keeps calls failing fast while the database is down, instead of hanging.
 * The pool is small: hot paths run on the unit's pg pool (`createPgDb`), Prisma only serves cold
 * ones (accounts, admin listings, seeding, confirmations), and every connection costs Postgres a
 * backend.
 */
export function createPrismaClient<T>(PrismaClient: new (options: { adapter: PrismaPg }) => T, url: string, poolSize = 3): T {
  const adapter = new PrismaPg({ connectionString: url, max: poolSize, connectionTimeoutMillis: 3000, idleTimeoutMillis: 30000 });
  return new PrismaClient({ adapter });
}
