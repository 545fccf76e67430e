/**
 * Unsettled placements are checked by every routing replica's pass: a due one is claimed by one
 * pass at a time (FOR UPDATE SKIP LOCKED, and its next check moved ahead), so two replicas never
 * ask the provider about it, or cancel it, twice at once.
 */
import { createPgDb, ensureDatabase, migrate, type PgDb } from "@pgw/kit";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { dropDatabases, uniqueDatabaseUrl } from "../../../test/support/infra";
import { claimDueUnsettledPlacements } from "../src/store";

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const url = uniqueDatabaseUrl("routing_claims");
let replicas: PgDb[];
let providerId: string;

beforeAll(async () => {
  await ensureDatabase(url);
  await migrate(url, path.join(__dirname, "..", "prisma", "migrations"), silent);
  replicas = [createPgDb(url, 2), createPgDb(url, 2)];
  providerId = randomUUID();
  await replicas[0].$executeRawUnsafe(`INSERT INTO providers (id, code, name, connector, base_url, callback_secret, timeout_ms) VALUES ($1::uuid, 'p1', 'P1', 'sandbox', 'http://127.0.0.1:9', 's', 1000)`, providerId);
}, 60_000);
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.end()));
  await dropDatabases([url]);
});

const insert = (operationId: string, dueInMs: number) =>
  replicas[0].$executeRawUnsafe(
    `INSERT INTO unsettled_placements (id, operation_id, provider_id, type, next_check_at) VALUES ($1::uuid, $2::uuid, $3::uuid, 'payout', now() + $4::int * interval '1 millisecond')`,
    randomUUID(),
    operationId,
    providerId,
    dueInMs,
  );

test("two replicas claiming at once get each due placement once, with its provider; one not yet due is left", async () => {
  const due = [randomUUID(), randomUUID(), randomUUID()];
  for (const id of due) await insert(id, -1000);
  const later = randomUUID();
  await insert(later, 60_000);

  const [a, b] = await Promise.all(replicas.map((r) => claimDueUnsettledPlacements(r, 20, 30_000)));
  const claimed = [...a, ...b].map((row) => row.operationId).sort();
  expect(claimed).toEqual([...due].sort());
  expect([...a, ...b].every((row) => row.provider.id === providerId && row.provider.code === "p1" && row.checks === 0)).toBe(true);
  // Claimed rows are not due again until their claim lapses.
  expect(await claimDueUnsettledPlacements(replicas[0], 20, 30_000)).toEqual([]);
});
