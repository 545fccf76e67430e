/**
 * Receipts' handling of a completed status event against its migrated schema: evidence from the
 * legs the event carries is stored by one statement, with no read before it and no call; a
 * redelivery changes nothing and reports a mismatch once; an event without legs that finds the
 * evidence stored asks routing nothing.
 */
import { create } from "@bufbuild/protobuf";
import { Money } from "@pgw/contracts";
import { ensureDatabase, migrate } from "@pgw/kit/db";
import { SingleFlight } from "@pgw/kit/runtime";
import { recordingDb } from "@pgw/kit/testing";
import { OperationStatusChangedSchema, ProviderEvidenceSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { randomUUID } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { dropDatabases, uniqueDatabaseUrl } from "../../../test/support/infra";
import { onStatusChanged } from "../src/events";
import type { ReceiptsDeps } from "../src/handlers/deps";
import { readEvidence, type Sql } from "../src/store";

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const url = uniqueDatabaseUrl("receipts_events");
let pool: pg.Pool;

beforeAll(async () => {
  await ensureDatabase(url);
  await migrate(url, path.join(__dirname, "..", "prisma", "migrations"), silent);
  pool = new pg.Pool({ connectionString: url, max: 2 });
}, 60_000);
afterAll(async () => {
  await pool?.end();
  await dropDatabases([url]);
});

/** Receipts' handler collaborators on a statement-recording database; routing is asked only through `routingCalls`. */
function handlerDeps() {
  const recorded = recordingDb(pool);
  const alerts: unknown[] = [];
  const routingCalls: string[] = [];
  const deps = {
    sql: recorded.db as unknown as Sql,
    log: { ...silent, error: (fields: { alert?: string }) => void (fields.alert && alerts.push(fields.alert)) },
    peers: {
      routing: {
        getEvidence: async ({ operationId }: { operationId: string }) => {
          routingCalls.push(operationId);
          return { legs: [] };
        },
      },
    },
    links: { baseUrl: "https://pay.example.com", secret: "test-secret" },
    materialising: new SingleFlight(),
    now: () => new Date(),
  } as unknown as ReceiptsDeps;
  return { deps, statements: recorded.statements, alerts, routingCalls };
}

const completedAt = "2026-01-01T10:01:00.000Z";
// Item "a" completes first: items are kept in (completed_at, id) order, and ids derive from the operation's.
const firstItemAt = "2026-01-01T10:00:30.000Z";
/** A completion of 1500.00 whose event carries one leg, its items adding up to `itemAmount` + 500.00. */
const completion = (operationId: string, itemAmount = "1000.00", withLegs = true) =>
  create(OperationStatusChangedSchema, {
    eventId: randomUUID(),
    operationId,
    status: "completed",
    operation: { operationId, status: "completed", actualAmount: "1500.00", currency: "RUB", updatedAt: completedAt },
    occurredAt: completedAt,
    providerEvidence: withLegs
      ? create(ProviderEvidenceSchema, {
          legs: [{ legId: "L1", amount: "1500.00", completedAt, legacy: false, items: [{ id: "a", amount: itemAmount, completedAt: firstItemAt, hasFile: true }, { id: "b", amount: "500.00", completedAt, hasFile: false }] }],
        })
      : undefined,
  });

describe("a completed operation's status event", () => {
  it("stores the evidence from the legs it carries in one statement, asking nothing", async () => {
    const { deps, statements, routingCalls } = handlerDeps();
    const operationId = randomUUID();
    await onStatusChanged(deps, completion(operationId));
    expect(statements.map((s) => s.inTransaction)).toEqual([false]);
    expect(statements[0].sql).toMatch(/^with "s" as \(insert into "evidence_states"/i);
    expect(routingCalls).toEqual([]);
    const stored = await readEvidence(deps.sql, operationId);
    expect({ status: stored?.status, amounts: stored?.items.map((i) => new Money(String(i.amount)).toFixed(2)) }).toEqual({ status: "complete", amounts: ["1000.00", "500.00"] });
  });

  it("redelivered, changes nothing and reports legs that do not add up once", async () => {
    const { deps, alerts } = handlerDeps();
    const operationId = randomUUID();
    await onStatusChanged(deps, completion(operationId, "900.00"));
    const first = await readEvidence(deps.sql, operationId);
    expect(first?.status).toBe("partial");
    await onStatusChanged(deps, completion(operationId, "1000.00")); // the same completion again, even with other legs
    expect(await readEvidence(deps.sql, operationId)).toEqual(first);
    expect(alerts).toEqual(["receipts_evidence_mismatch"]);
  });

  it("without legs, finds stored evidence and asks routing nothing; without stored evidence, asks routing", async () => {
    const { deps, routingCalls } = handlerDeps();
    const stored = randomUUID();
    await onStatusChanged(deps, completion(stored));
    await onStatusChanged(deps, completion(stored, "1000.00", false));
    expect(routingCalls).toEqual([]);
    const unknown = randomUUID();
    await onStatusChanged(deps, completion(unknown, "1000.00", false));
    expect(routingCalls).toEqual([unknown]);
    expect((await readEvidence(deps.sql, unknown))?.items.map((i) => new Money(String(i.amount)).toFixed(2))).toEqual(["1500.00"]);
  });
});
