/**
 * Unsettled placements are checked by every routing replica's pass: a due one is claimed by one
 * pass at a time (FOR UPDATE SKIP LOCKED, and its next check moved ahead), so two replicas never
 * ask the provider about it, or cancel it, twice at once.
 */
import { createPgDb, ensureDatabase, migrate, type PgDb } from "@pgw/kit/db";
import { sql } from "kysely";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { dropDatabases, uniqueDatabaseUrl } from "../../../test/support/infra";
import { claimDueUnsettledPlacements, type DB } from "../src/store";

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const url = uniqueDatabaseUrl("routing_claims");
let replicas: PgDb<DB>[];
let providerId: string;

beforeAll(async () => {
  await ensureDatabase(url);
  await migrate(url, path.join(__dirname, "..", "prisma", "migrations"), silent);
  replicas = [createPgDb<DB>(url, 2), createPgDb<DB>(url, 2)];
  providerId = randomUUID();
  await replicas[0].insertInto("providers").values({ id: providerId, code: "p1", name: "P1", connector: "sandbox", baseUrl: "http://127.0.0.1:9", callbackSecret: "s", timeoutMs: 1000 }).execute();
}, 60_000);
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.end()));
  await dropDatabases([url]);
});

const insert = (operationId: string, dueInMs: number) =>
  replicas[0]
    .insertInto("unsettledPlacements")
    .values({ id: randomUUID(), operationId, providerId, type: "payout", nextCheckAt: sql<Date>`now() + ${dueInMs}::int * interval '1 millisecond'` })
    .execute();

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
