import { createPgDb, type NumericColumn } from "@pgw/kit/db";
import { sql, type ColumnType, type Kysely } from "kysely";
import { TestDatabases } from "@pgw/kit/testing";

const dbs = new TestDatabases("pgdb");
afterAll(() => dbs.dropAll());

/** The server process of the connection `db` runs its statements on. */
const backendPid = async (db: Kysely<any>) => (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db)).rows[0].pid;
const selectOk = async (db: Kysely<any>) => (await sql<{ ok: number }>`SELECT 1 AS ok`.execute(db)).rows;

test("rows come back as Prisma's raw queries give them: NUMERIC as a decimal, BIGINT as a bigint", async () => {
  const db = createPgDb(await dbs.create(), 2);
  try {
    const {
      rows: [row],
    } = await sql<{ n: { toFixed(dp: number): string }; b: bigint; t: Date }>`SELECT 10.10::numeric AS n, 9007199254740993::bigint AS b, now() AS t`.execute(db);
    expect(row.n.toFixed(2)).toBe("10.10");
    expect(row.b).toBe(9007199254740993n);
    expect(row.t).toBeInstanceOf(Date);
  } finally {
    await db.end();
  }
});

test("a connection lost between a transaction's statements fails that transaction, not the process, and is not reused", async () => {
  const url = await dbs.create();
  const db = createPgDb(url, 1);
  const unhandled: unknown[] = [];
  const onUncaught = (err: unknown) => unhandled.push(err);
  process.on("uncaughtException", onUncaught);
  try {
    const outcome = db.$transaction(async (tx) => {
      const pid = await backendPid(tx);
      const killer = createPgDb(url, 1);
      await sql`SELECT pg_terminate_backend(${pid})`.execute(killer);
      await killer.end();
      await new Promise((r) => setTimeout(r, 200)); // the termination reaches the idle connection
      return sql`SELECT 1`.execute(tx);
    });
    await expect(outcome).rejects.toThrow();
    expect(unhandled).toEqual([]);
    // The one pooled connection was destroyed, so the next statement gets a fresh one.
    expect(await selectOk(db)).toEqual([{ ok: 1 }]);
  } finally {
    process.off("uncaughtException", onUncaught);
    await db.end();
  }
});

test("a parameterised statement is prepared once per connection; one without parameters may hold several statements", async () => {
  const db = createPgDb(await dbs.create(), 1);
  try {
    const prepared = await db.$transaction(async (tx) => {
      for (let i = 0; i < 3; i++) expect((await sql`SELECT ${i}::int + 1 AS v`.execute(tx)).rows).toEqual([{ v: i + 1 }]);
      return (await sql`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = 'SELECT $1::int + 1 AS v'`.execute(tx)).rows;
    });
    expect(prepared).toEqual([{ n: 1 }]);
    await sql`CREATE TABLE t (v int); INSERT INTO t VALUES (1), (2)`.execute(db);
    expect((await sql`SELECT count(*)::int AS n FROM t WHERE v > ${0}`.execute(db)).rows).toEqual([{ n: 2 }]);
  } finally {
    await db.end();
  }
});

test("a transaction waits for a connection as long as its maxWait says, shorter or longer than a statement's 3 s", async () => {
  const db = createPgDb(await dbs.create(), 1);
  try {
    let releaseHolder!: () => void;
    const held = new Promise<void>((r) => (releaseHolder = r));
    const holder = db.$transaction(() => held, { timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 50)); // the holder has the only connection

    const impatientStart = Date.now();
    await expect(db.$transaction(async () => "never", { maxWait: 200 })).rejects.toThrow("no database connection within 200 ms");
    expect(Date.now() - impatientStart).toBeLessThan(1000);

    const patient = db.$transaction(selectOk, { maxWait: 6000 });
    setTimeout(releaseHolder, 3500);
    expect(await patient).toEqual([{ ok: 1 }]);
    await holder;
    // The connection the impatient caller gave up on went back to the pool: nothing is stuck.
    expect(await selectOk(db)).toEqual([{ ok: 1 }]);
  } finally {
    await db.end();
  }
}, 15_000);

test("a statement Postgres refuses leaves its connection in the pool; the caller gets the error", async () => {
  const db = createPgDb(await dbs.create(), 1);
  try {
    await sql`CREATE TABLE u (k int PRIMARY KEY)`.execute(db);
    const before = await backendPid(db);
    await sql`INSERT INTO u VALUES (${1})`.execute(db);
    await expect(sql`INSERT INTO u VALUES (${1})`.execute(db)).rejects.toMatchObject({ code: "23505" });
    expect(await backendPid(db)).toBe(before);
  } finally {
    await db.end();
  }
});

test("commits are durable (synchronous_commit on) unless the pool is asked for asynchronous commits", async () => {
  const url = await dbs.create();
  const durable = createPgDb(url, 1);
  const relaxed = createPgDb(url, 1, { asyncCommit: true });
  try {
    const setting = async (db: Kysely<any>) => (await sql<{ v: string }>`SELECT current_setting('synchronous_commit') AS v`.execute(db)).rows[0].v;
    expect(await setting(durable)).toBe("on");
    expect(await setting(relaxed)).toBe("off");
    expect(await relaxed.$transaction(setting)).toBe("off");
  } finally {
    await durable.end();
    await relaxed.end();
  }
});

test("a transaction whose BEGIN is stuck on a stalled server fails at its timeout, with no unhandled rejection", async () => {
  const db = createPgDb(await dbs.create(), 1);
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  // The pool's one connection: stall its server process (Postgres runs on this machine in tests).
  const pid = await backendPid(db);
  process.kill(pid, "SIGSTOP");
  const wake = () => {
    try {
      process.kill(pid, "SIGCONT");
    } catch {
      /* already gone: the dropped connection ended it */
    }
  };
  const resume = setTimeout(wake, 1500);
  try {
    const started = Date.now();
    await expect(db.$transaction(async (tx) => sql`SELECT 1`.execute(tx), { timeout: 300 })).rejects.toThrow("transaction exceeded 300 ms");
    expect(Date.now() - started).toBeLessThan(1000);
  } finally {
    await new Promise((r) => setTimeout(r, 1600)); // past the resume
    clearTimeout(resume);
    wake();
    process.off("unhandledRejection", onUnhandled);
  }
  expect(unhandled).toEqual([]);
  expect(await selectOk(db)).toEqual([{ ok: 1 }]); // the stuck connection was dropped
  await db.end();
});

test("a commit listener runs once per committed transaction that asked to wake its channel; one that throws does not fail the committed transaction", async () => {
  const db = createPgDb(await dbs.create(), 1);
  try {
    let woken = 0;
    db.onCommit("counted", () => void woken++);
    db.onCommit("throwing", () => {
      throw new Error("listener failure");
    });
    await db.$transaction(async (tx) => {
      expect(tx.wakeOnCommit?.("counted")).toBe(true);
      expect(tx.wakeOnCommit?.("counted")).toBe(true); // asked twice, woken once
      expect(tx.wakeOnCommit?.("unheard")).toBe(false); // nobody listens: the caller must NOTIFY itself
      expect(woken).toBe(0); // not before the commit
    });
    expect(woken).toBe(1);
    await expect(db.$transaction(async (tx) => (tx.wakeOnCommit("throwing"), selectOk(tx)))).resolves.toEqual([{ ok: 1 }]);
    await expect(
      db.$transaction(async (tx) => {
        tx.wakeOnCommit?.("counted");
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(woken).toBe(1);
  } finally {
    await db.end();
  }
});

test("a commit listener gets the items its transaction gave, in order, once it committed; a rollback gives it nothing", async () => {
  const db = createPgDb(await dbs.create(), 1);
  try {
    const calls: string[][] = [];
    db.onCommit<string>("items", (items) => void calls.push(items));
    await db.$transaction(async (tx) => {
      tx.wakeOnCommit?.("items", "a");
      tx.wakeOnCommit?.("items");
      tx.wakeOnCommit?.("items", "b");
    });
    await expect(
      db.$transaction(async (tx) => {
        tx.wakeOnCommit?.("items", "never");
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    await db.$transaction(async (tx) => void tx.wakeOnCommit?.("items"));
    expect(calls).toEqual([["a", "b"], []]);
  } finally {
    await db.end();
  }
});

test("announceCommitted calls the channel's listener at once with the items given, and says when none listens", async () => {
  const db = createPgDb(await dbs.create(), 1);
  try {
    const calls: number[][] = [];
    db.onCommit<number>("items", (items) => void calls.push(items));
    db.onCommit("throwing", () => {
      throw new Error("listener failure");
    });
    expect(db.announceCommitted("items", [1, 2])).toBe(true);
    expect(calls).toEqual([[1, 2]]);
    expect(db.announceCommitted("unheard", [3])).toBe(false);
    expect(db.announceCommitted("throwing", [])).toBe(true); // the statement committed all the same
  } finally {
    await db.end();
  }
});

describe("Kysely on the pool", () => {
  interface Tables {
    ledgerRows: { id: number; shopId: string; amount: NumericColumn; createdAt: ColumnType<Date, Date | undefined, never> };
  }
  const createLedgerRows = (db: Kysely<any>) =>
    sql`CREATE TABLE ledger_rows (id int PRIMARY KEY, shop_id text NOT NULL, amount numeric(20, 6) NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`.execute(db);

  test("writes and reads with camelCase names for the snake_case columns, NUMERIC as a decimal, each shape prepared once per connection", async () => {
    const db = createPgDb<Tables>(await dbs.create(), 1);
    try {
      await createLedgerRows(db);
      await db.insertInto("ledgerRows").values({ id: 1, shopId: "s1", amount: "7.125000", createdAt: new Date() }).execute();
      const row = await db.selectFrom("ledgerRows").selectAll().where("shopId", "=", "s1").executeTakeFirstOrThrow();
      expect(Object.keys(row).sort()).toEqual(["amount", "createdAt", "id", "shopId"]);
      expect(row.amount.toFixed(6)).toBe("7.125000");
      expect(row.createdAt).toBeInstanceOf(Date);
      for (const shopId of ["s2", "s3"]) await db.selectFrom("ledgerRows").select("id").where("shopId", "=", shopId).execute();
      const {
        rows: [{ prepared }],
      } = await sql<{ prepared: string }>`SELECT count(*)::text AS prepared FROM pg_prepared_statements WHERE statement LIKE '%from "ledger_rows" where "shop_id" = $1%'`.execute(db);
      expect(prepared).toBe("2"); // selectAll and select id: two texts, each prepared once
    } finally {
      await db.end();
    }
  });

  test("a transaction's statements run on its connection and roll back together; Kysely's own transaction() is refused", async () => {
    const db = createPgDb<Tables>(await dbs.create(), 2);
    try {
      await createLedgerRows(db);
      const failed = db.$transaction(async (tx) => {
        await tx.insertInto("ledgerRows").values({ id: 1, shopId: "s1", amount: "1" }).execute();
        await tx.insertInto("ledgerRows").values({ id: 1, shopId: "s1", amount: "2" }).execute();
      });
      await expect(failed).rejects.toThrow(/duplicate key/);
      expect(await db.selectFrom("ledgerRows").selectAll().execute()).toEqual([]);
      const moved = await db.$transaction(async (tx) => {
        const { numUpdatedRows } = await tx.insertInto("ledgerRows").values({ id: 2, shopId: "s1", amount: "3" }).executeTakeFirstOrThrow().then(async () =>
          tx.updateTable("ledgerRows").set({ amount: "4" }).where("id", "=", 2).executeTakeFirstOrThrow(),
        );
        return numUpdatedRows;
      });
      expect(moved).toBe(1n);
      await expect(db.transaction().execute(async () => undefined)).rejects.toThrow(/\$transaction/);
    } finally {
      await db.end();
    }
  });
});

test("onStatement sees every statement before it runs, with whether it is in a transaction (BEGIN, COMMIT and ROLLBACK too); a throwing observer fails nothing", async () => {
  const url = await dbs.create();
  const seen: [string, boolean][] = [];
  const db = createPgDb<{ t: { v: number } }>(url, 1, { onStatement: (text, inTransaction) => void seen.push([text, inTransaction]) });
  const throwing = createPgDb(url, 1, {
    onStatement: () => {
      throw new Error("observer failure");
    },
  });
  try {
    await sql`CREATE TABLE t (v int PRIMARY KEY)`.execute(db);
    await db.$transaction(async (tx) => void (await tx.insertInto("t").values({ v: 1 }).execute()), { isolationLevel: "Serializable" });
    await expect(db.$transaction(async (tx) => tx.insertInto("t").values({ v: 1 }).execute())).rejects.toMatchObject({ code: "23505" });
    await db.selectFrom("t").select("v").where("v", "=", 1).execute();
    expect(seen).toEqual([
      ["CREATE TABLE t (v int PRIMARY KEY)", false],
      ["BEGIN ISOLATION LEVEL SERIALIZABLE", true],
      ['insert into "t" ("v") values ($1)', true],
      ["COMMIT", true],
      ["BEGIN", true],
      ['insert into "t" ("v") values ($1)', true],
      ["ROLLBACK", true],
      ['select "v" from "t" where "v" = $1', false],
    ]);
    expect(await selectOk(throwing)).toEqual([{ ok: 1 }]);
    expect(await throwing.$transaction(selectOk)).toEqual([{ ok: 1 }]);
  } finally {
    await db.end();
    await throwing.end();
  }
});
