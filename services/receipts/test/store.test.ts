/**
 * Receipts' statements against its migrated schema: the review lease's conflict rule (one review
 * per operation, an expired claim taken over), evidence written once in one statement and read back
 * in order with exact amounts, the file cache of an item set once, and stored files.
 */
import { Money } from "@pgw/contracts";
import { createPgDb, ensureDatabase, migrate } from "@pgw/kit/db";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { dropDatabases, uniqueDatabaseUrl } from "../../../test/support/infra";
import type { EvidenceItemDraft } from "@pgw/contracts";
import type { Finding } from "../src/domain/findings";
import type { DB } from "../src/generated/kysely/database";
import {
  claimReview,
  findEvidenceItem,
  listConfirmations,
  markApplied,
  postgresFileStorage,
  readEvidence,
  recordConfirmation,
  releaseReview,
  saveEvidence,
  setItemFile,
  type Sql,
} from "../src/store";

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const url = uniqueDatabaseUrl("receipts_store");
let db: Sql;

beforeAll(async () => {
  await ensureDatabase(url);
  await migrate(url, path.join(__dirname, "..", "prisma", "migrations"), silent);
  db = createPgDb<DB>(url, 4);
}, 60_000);
afterAll(async () => {
  await db?.end();
  await dropDatabases([url]);
});

describe("review leases", () => {
  it("lets one holder at a time review an operation; the holder's release frees it, another's does not", async () => {
    const operationId = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    expect(await claimReview(db, operationId, a, 60_000)).toBe(true);
    expect(await claimReview(db, operationId, b, 60_000)).toBe(false);
    expect(await claimReview(db, randomUUID(), b, 60_000)).toBe(true); // another operation is free
    await releaseReview(db, operationId, b);
    expect(await claimReview(db, operationId, b, 60_000)).toBe(false);
    await releaseReview(db, operationId, a);
    expect(await claimReview(db, operationId, b, 60_000)).toBe(true);
  });

  it("takes over a claim that has expired (a crashed review), and only that one", async () => {
    const operationId = randomUUID();
    const [crashed, next, late] = [randomUUID(), randomUUID(), randomUUID()];
    expect(await claimReview(db, operationId, crashed, -1000)).toBe(true);
    expect(await claimReview(db, operationId, next, 60_000)).toBe(true);
    expect(await claimReview(db, operationId, late, 60_000)).toBe(false);
    // The crashed review's release, arriving late, leaves the new holder's claim alone.
    await releaseReview(db, operationId, crashed);
    expect(await db.selectFrom("reviewLeases").select("holder").where("operationId", "=", operationId).executeTakeFirst()).toEqual({ holder: next });
  });

  it("gives a claim to exactly one of many concurrent reviews", async () => {
    const operationId = randomUUID();
    const claims = await Promise.all(Array.from({ length: 8 }, () => claimReview(db, operationId, randomUUID(), 60_000)));
    expect(claims.filter(Boolean)).toHaveLength(1);
  });
});

describe("evidence", () => {
  const item = (operationId: string, over: Partial<EvidenceItemDraft>): EvidenceItemDraft => ({
    id: randomUUID(),
    legId: "leg-1",
    amount: new Money("1"),
    completedAt: new Date("2026-11-01T10:00:00.000Z"),
    legacy: false,
    hasFile: true,
    providerItemId: `prv-${operationId.slice(0, 4)}`,
    ...over,
  });

  it("is stored once, answered as stored, and read back in (completed_at, id) order with exact amounts", async () => {
    const operationId = randomUUID();
    const items = [
      item(operationId, { amount: new Money("0.000000000000000001"), completedAt: new Date("2026-11-01T10:00:02.000Z") }),
      item(operationId, { id: "00000000-0000-4000-8000-000000000002", amount: new Money("1000.01"), completedAt: new Date("2026-11-01T10:00:01.000Z") }),
      item(operationId, { id: "00000000-0000-4000-8000-000000000001", legId: "leg-2", amount: new Money("399.99"), completedAt: new Date("2026-11-01T10:00:01.000Z"), legacy: true, hasFile: false, providerItemId: null }),
    ];
    expect(await readEvidence(db, operationId)).toBeNull();
    const stored = await saveEvidence(db, operationId, "partial", items);
    const expected = [items[2], items[1], items[0]].map(({ legId: _, ...i }) => ({ ...i, operationId, fileId: null }));
    expect(stored).toEqual({ status: "partial", items: expected });

    // A second materialisation (another replica, or the event after an on-demand read) changes
    // nothing, whether it makes the same item ids (derived from operation, leg and provider item)
    // or other ones (the provider's legs changed in between).
    expect(await saveEvidence(db, operationId, "complete", items.map((i) => ({ ...i, amount: i.amount.plus(1), hasFile: !i.hasFile })))).toBeNull();
    expect(await saveEvidence(db, operationId, "complete", [item(operationId, { id: "00000000-0000-4000-8000-000000000003", legId: "leg-3" })])).toBeNull();
    const read = await readEvidence(db, operationId);
    expect(read).toEqual({ status: "partial", items: expected });
    expect(read!.items.map((i) => i.amount.toFixed())).toEqual(["399.99", "1000.01", "0.000000000000000001"]);
  });

  it("stores a state without items, read back as no items", async () => {
    const operationId = randomUUID();
    expect(await saveEvidence(db, operationId, "partial", [])).toEqual({ status: "partial", items: [] });
    expect(await readEvidence(db, operationId)).toEqual({ status: "partial", items: [] });
  });

  it("keeps the first cached file of an item", async () => {
    const operationId = randomUUID();
    const [draft] = [item(operationId, {})];
    await saveEvidence(db, operationId, "complete", [draft]);
    const [first, second] = [randomUUID(), randomUUID()];
    await setItemFile(db, draft.id, first);
    await setItemFile(db, draft.id, second);
    expect(await findEvidenceItem(db, draft.id)).toMatchObject({ id: draft.id, operationId, fileId: first, providerItemId: draft.providerItemId, hasFile: true });
    expect(await findEvidenceItem(db, randomUUID())).toBeNull();
  });
});

describe("confirmations and files", () => {
  it("records an upload with its review and marks its outcome applied", async () => {
    const operationId = randomUUID();
    const files = postgresFileStorage(db);
    const content = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x00, 0xff]);
    const ref = await files.put({ content: content.subarray(1, 6), contentType: "application/pdf" });
    expect(ref).toEqual({ id: expect.any(String), size: 5, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await files.get(ref.id)).toEqual({ content: new Uint8Array([0x50, 0x44, 0x46, 0x2d, 0x00]), contentType: "application/pdf" });
    expect(await files.get(randomUUID())).toBeNull();

    // Ordered ids: two uploads within one millisecond are listed by id.
    const [id, other] = [randomUUID(), randomUUID()].sort();
    const findings: Finding[] = [{ code: "not_a_pdf", detail: "image/png cannot be validated" }];
    const base = { operationId, shopId: randomUUID(), confirmationType: "receipt", fileId: ref.id, filename: "r.png", contentType: "image/png", declaredType: "image/png" };
    await recordConfirmation(db, { ...base, id, decision: { outcome: "manual_check", reason: "not_terminal" }, findings });
    await recordConfirmation(db, { ...base, id: other, decision: { outcome: "retry" }, findings: [] });
    await markApplied(db, id);
    const listed = await listConfirmations(db, operationId);
    expect(listed.map((c) => [c.outcome, c.manualCheckReason, c.findings, c.appliedAt instanceof Date])).toEqual([
      ["manual_check", "not_terminal", findings, true],
      [null, null, [], false],
    ]);
  });
});
