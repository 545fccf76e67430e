import { randomBytes, randomUUID } from "node:crypto";
import { parseDataKeys, SealedValueError } from "@pgw/kit/db";
import { pgDbOn } from "@pgw/kit/db";
import { resealColumns } from "@pgw/kit/db";
import { TestDatabases } from "@pgw/kit/testing";

const dbs = new TestDatabases("reseal");
afterAll(() => dbs.dropAll());

const [keyA, keyB, keyC] = [0, 1, 2].map(() => randomBytes(32).toString("base64"));
const beforeRotation = parseDataKeys(`a:${keyA}`, undefined);
const duringRotation = parseDataKeys(`a:${keyA},b:${keyB}`, "b");
const COLUMNS = [{ table: "things", column: "secret" }];

async function thingsTable() {
  const { pool } = await dbs.createWithOutbox(`CREATE TABLE things (id UUID PRIMARY KEY, secret TEXT, note TEXT NOT NULL DEFAULT '')`);
  const insert = async (secret: string | null) => {
    const id = randomUUID();
    await pool.query(`INSERT INTO things (id, secret) VALUES ($1, $2)`, [id, secret]);
    return id;
  };
  const stored = async () => new Map((await pool.query<{ id: string; secret: string | null }>(`SELECT id::text, secret FROM things`)).rows.map((r) => [r.id, r.secret]));
  return { pool, db: pgDbOn(pool), insert, stored };
}

it("seals every value under the active key (older keys and values stored in clear), in batches, and then finds nothing to do", async () => {
  const { db, insert, stored } = await thingsTable();
  const plain = new Map<string, string>();
  for (let i = 0; i < 5; i++) plain.set(await insert(beforeRotation.seal(`card-${i}`)), `card-${i}`);
  plain.set(await insert("4111111111111111"), "4111111111111111"); // stored in clear by an earlier version
  const current = await insert(duringRotation.seal("already current"));
  const empty = await insert(null);
  const untouched = (await stored()).get(current);

  expect(await resealColumns(db, duringRotation, COLUMNS, 2)).toEqual({ "things.secret": 6 });

  const after = await stored();
  expect(after.get(current)).toBe(untouched);
  expect(after.get(empty)).toBeNull();
  // Readable with the new key alone: the old one can be dropped.
  const newOnly = parseDataKeys(`b:${keyB}`, undefined);
  for (const [id, value] of plain) {
    expect(after.get(id)).toMatch(/^v1:b:/);
    expect(newOnly.open(after.get(id)!)).toBe(value);
  }
  expect(await resealColumns(db, duringRotation, COLUMNS, 2)).toEqual({ "things.secret": 0 });
});

it("leaves a value written while it ran to its writer", async () => {
  const { pool, insert, stored } = await thingsTable();
  const id = await insert(beforeRotation.seal("old"));
  const written = duringRotation.seal("written meanwhile");
  // A unit writes the row while the pass runs: its transaction holds the new value, uncommitted, so
  // the pass reads the old one; it commits once the pass sends its write (which then waits for it).
  const writer = await pool.connect();
  try {
    await writer.query("BEGIN");
    await writer.query(`UPDATE things SET secret = $1 WHERE id = $2`, [written, id]);
    let committed: Promise<unknown> | undefined;
    const racing = pgDbOn(pool, { onStatement: (sql) => void (/^UPDATE/.test(sql) && (committed ??= writer.query("COMMIT"))) });
    expect(await resealColumns(racing, duringRotation, COLUMNS)).toEqual({ "things.secret": 0 });
    await committed;
    expect(committed).toBeDefined();
  } finally {
    await writer.query("ROLLBACK").catch(() => undefined); // only when the pass never wrote
    writer.release();
  }
  expect((await stored()).get(id)).toBe(written);
});

it("stops with a clear error at a value sealed under a key it does not hold", async () => {
  const { db, insert } = await thingsTable();
  await insert(parseDataKeys(`c:${keyC}`, undefined).seal("x"));
  await expect(resealColumns(db, duringRotation, COLUMNS)).rejects.toThrow(new SealedValueError('value sealed under data key "c", which DATA_KEYS does not hold (it holds a, b)'));
});

it("reaches a unit's snake_case table and column by their names", async () => {
  const { pool } = await dbs.createWithOutbox(`CREATE TABLE provider_callbacks (id UUID PRIMARY KEY, requisites_number TEXT)`);
  const id = randomUUID();
  await pool.query(`INSERT INTO provider_callbacks (id, requisites_number) VALUES ($1, $2)`, [id, beforeRotation.seal("4111111111111111")]);
  expect(await resealColumns(pgDbOn(pool), duringRotation, [{ table: "provider_callbacks", column: "requisites_number" }])).toEqual({ "provider_callbacks.requisites_number": 1 });
  const { rows } = await pool.query(`SELECT requisites_number AS v FROM provider_callbacks`);
  expect(rows[0].v).toMatch(/^v1:b:/);
  expect(duringRotation.open(rows[0].v)).toBe("4111111111111111");
});
