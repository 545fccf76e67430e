/**
 * The tables the kit works on in every unit's database — the outbox and the consumers' processed
 * events — have one definition, services/kit/sql/outbox.sql. Each unit's migrations must end with
 * exactly those tables: the same columns (types, nullability, defaults), keys and indexes, since
 * the kit's statements (outbox relay, consumers, housekeeping) and its partial-index choices assume
 * them. A unit that drifts fails here, named.
 */
import { ensureDatabase, migrate, type KitTables } from "@pgw/kit/db";
import fs from "node:fs";
import path from "node:path";
import { Client } from "pg";
import type { DB as LedgerTables } from "../services/ledger/src/generated/kysely/database";
import type { DB as NotifierTables } from "../services/notifier/src/generated/kysely/database";
import type { DB as OperationsTables } from "../services/operations/src/generated/kysely/database";
import type { DB as ReceiptsTables } from "../services/receipts/src/generated/kysely/database";
import type { DB as RoutingTables } from "../services/routing/src/generated/kysely/database";
import { dropDatabases, uniqueDatabaseUrl } from "./support/infra";

/** True when a unit's generated Kysely types (prisma-kysely) have the kit's tables as the kit's statements type them (kit-tables.ts). */
type HoldsKitTables<DB> = [{ [T in keyof KitTables]: DB[T & keyof DB] }] extends [KitTables] ? ([KitTables] extends [{ [T in keyof KitTables]: DB[T & keyof DB] }] ? true : false) : false;
type Holds<T extends true> = T;
/** Checked by the type checker (npx tsc), not by Jest: a unit whose Prisma models of the shared tables drift fails to compile here. */
export type GeneratedTypesHoldKitTables = [
  Holds<HoldsKitTables<LedgerTables>>,
  Holds<HoldsKitTables<NotifierTables>>,
  Holds<HoldsKitTables<OperationsTables>>,
  Holds<HoldsKitTables<ReceiptsTables>>,
  Holds<HoldsKitTables<RoutingTables>>,
];

const servicesDir = path.join(__dirname, "..", "services");
const KIT_DDL = path.join(servicesDir, "kit", "sql", "outbox.sql");
const SHARED = ["outbox", "processed_events"];

/** The units whose migrations create the shared tables (every unit that publishes or consumes events). */
const units = fs
  .readdirSync(servicesDir)
  .filter((unit) => fs.existsSync(path.join(servicesDir, unit, "prisma", "migrations")))
  .filter((unit) => fs.readFileSync(path.join(servicesDir, unit, "prisma", "schema.prisma"), "utf8").includes('@@map("outbox")'));

/** What Postgres holds for the shared tables: columns, constraints and indexes, in a stable order. */
async function sharedTablesOf(url: string) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const columns = await client.query(
      `SELECT table_name, column_name, data_type, datetime_precision, is_nullable, column_default
         FROM information_schema.columns WHERE table_schema = 'public' AND table_name = ANY($1) ORDER BY table_name, column_name`,
      [SHARED],
    );
    const constraints = await client.query(
      `SELECT conrelid::regclass::text AS table_name, conname, pg_get_constraintdef(oid) AS definition
         FROM pg_constraint WHERE conrelid::regclass::text = ANY($1) ORDER BY 1, 2`,
      [SHARED],
    );
    const indexes = await client.query(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = ANY($1) ORDER BY 1, 2`, [SHARED]);
    return { columns: columns.rows, constraints: constraints.rows, indexes: indexes.rows };
  } finally {
    await client.end();
  }
}

let expected: Awaited<ReturnType<typeof sharedTablesOf>>;

beforeAll(async () => {
  const url = uniqueDatabaseUrl("kit_ddl");
  try {
    await ensureDatabase(url);
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query(fs.readFileSync(KIT_DDL, "utf8")).finally(() => client.end());
    expected = await sharedTablesOf(url);
  } finally {
    await dropDatabases([url]);
  }
}, 60_000);

test("the kit's definition has both tables, their keys and the indexes its statements rely on", () => {
  expect(new Set(expected.columns.map((c) => c.table_name))).toEqual(new Set(SHARED));
  expect(expected.indexes.map((i) => i.indexname)).toEqual(
    expect.arrayContaining(["outbox_pkey", "outbox_unpublished_idx", "outbox_published_at_idx", "processed_events_pkey", "processed_events_processed_at_idx"]),
  );
});

test("five units keep the shared tables", () => {
  expect(units.sort()).toEqual(["ledger", "notifier", "operations", "receipts", "routing"]);
});

describe.each(units)("%s's migrations create the shared tables exactly as the kit defines them", (unit) => {
  test("columns, constraints and the kit's indexes", async () => {
    const url = uniqueDatabaseUrl(`shared_${unit.replace(/-/g, "_")}`);
    try {
      await ensureDatabase(url);
      await migrate(url, path.join(servicesDir, unit, "prisma", "migrations"));
      const actual = await sharedTablesOf(url);
      expect(actual.columns).toEqual(expected.columns);
      expect(actual.constraints).toEqual(expected.constraints);
      // A unit may index the outbox for reads of its own (operations: status events by time).
      expect(actual.indexes).toEqual(expect.arrayContaining(expected.indexes));
    } finally {
      await dropDatabases([url]);
    }
  }, 60_000);
});
