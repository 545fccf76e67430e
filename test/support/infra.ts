import { randomBytes } from "node:crypto";
import { databaseUrlFor, dropDatabase } from "@pgw/kit/db";

/** Postgres server of this run (global-setup guarantees it is set). */
export const databaseServerUrl = () => process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const natsUrl = () => process.env.NATS_URL ?? "nats://127.0.0.1:4222";

/** A database name no other run uses: pgw_t<random>_<suffix>. */
export function uniqueDatabaseUrl(suffix: string): string {
  return databaseUrlFor(databaseServerUrl(), `pgw_t${randomBytes(5).toString("hex")}_${suffix.replace(/-/g, "_")}`);
}

export async function dropDatabases(urls: string[]): Promise<void> {
  await Promise.all(urls.map((u) => dropDatabase(u)));
}
