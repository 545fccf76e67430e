import path from "node:path";
import { startEmbeddedInfra } from "../deploy/local/src/embedded-infra";

/**
 * Tests use the machine's Postgres and NATS when DATABASE_URL / NATS_URL are set (CI sets both);
 * otherwise embedded ones are started here for the whole run, and their URLs exported to workers.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL && process.env.NATS_URL) return;
  const infra = await startEmbeddedInfra({
    rootDir: path.join(__dirname, "..", ".data", "test-infra"),
    databaseUrl: process.env.DATABASE_URL,
    natsUrl: process.env.NATS_URL,
  });
  process.env.DATABASE_URL = infra.databaseUrl;
  process.env.NATS_URL = infra.natsUrl;
  (globalThis as { __pgwInfra?: typeof infra }).__pgwInfra = infra;
}
