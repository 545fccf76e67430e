import { PrismaPg } from "@prisma/adapter-pg";

/**
 * Builds a service's generated PrismaClient on the pg driver adapter (no query engine binary).
 * `connectionTimeoutMillis` keeps calls failing fast while the database is down, instead of hanging.
 */
export function createPrismaClient<T>(PrismaClient: new (options: { adapter: PrismaPg }) => T, url: string, poolSize = 10): T {
  const adapter = new PrismaPg({ connectionString: url, max: poolSize, connectionTimeoutMillis: 3000, idleTimeoutMillis: 30000 });
  return new PrismaClient({ adapter });
}
