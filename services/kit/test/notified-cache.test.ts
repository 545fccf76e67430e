import pg from "pg";
import { NotifiedCache } from "@pgw/kit/db";
import { TestDatabases, memoryLog, waitFor } from "@pgw/kit/testing";

jest.setTimeout(20_000);

const dbs = new TestDatabases("notified_cache");
const log = memoryLog();
afterAll(() => dbs.dropAll());

/** A cache on a fresh database, with a loader that answers a new number each time it runs. */
async function counted(maxEntries?: number) {
  const url = await dbs.create();
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const cache = new NotifiedCache<string, number>(maxEntries);
  let loads = 0;
  const load = async () => ++loads;
  /** Whether `key` is kept: two reads in a row give the same value. */
  const kept = async (key: string) => (await cache.get(key, load)) === (await cache.get(key, load));
  return { url, pool, cache, load, kept };
}

test("keeps nothing until it listens; then keeps what it loads until its channel is notified, by any connection", async () => {
  const { url, pool, cache, load, kept } = await counted();
  expect(await kept("k")).toBe(false);
  const listener = cache.listen(url, "things", log);
  try {
    await waitFor(() => kept("k"), 5000, "listening");
    const before = await cache.get("k", load);
    expect(await cache.get("k", load)).toBe(before);
    await pool.query(`SELECT pg_notify('things', '')`);
    await waitFor(async () => (await cache.get("k", load)) !== before, 5000, "dropped on NOTIFY");
    cache.set("k", 100);
    expect(await cache.get("k", load)).toBe(100);
  } finally {
    await listener.stop();
    await pool.end();
  }
});

test("answers a read that a change overtook without keeping it", async () => {
  const { url, pool, cache, load, kept } = await counted();
  const listener = cache.listen(url, "things", log);
  try {
    await waitFor(() => kept("other"), 5000, "listening");
    let finish = (_: number) => undefined as void;
    const overtaken = cache.get("k", () => new Promise<number>((r) => (finish = r)));
    cache.forget(); // a change while the read was on its way
    finish(-1);
    expect(await overtaken).toBe(-1);
    expect(await cache.get("k", load)).not.toBe(-1);
  } finally {
    await listener.stop();
    await pool.end();
  }
});

test("lets concurrent reads of a key share one load, and keeps a value set while it was loading", async () => {
  const { url, pool, cache, load, kept } = await counted();
  const listener = cache.listen(url, "things", log);
  try {
    await waitFor(() => kept("other"), 5000, "listening");
    let loads = 0;
    let finish = (_: number) => undefined as void;
    const slow = () => {
      loads++;
      return new Promise<number>((r) => (finish = r));
    };
    const reads = Promise.all([cache.get("k", slow), cache.get("k", slow), cache.get("k", slow)]);
    finish(7);
    expect(await reads).toEqual([7, 7, 7]);
    expect(loads).toBe(1);

    const overtaken = cache.get("j", slow);
    cache.set("j", 100); // this process changed the row while it was being read
    finish(-1);
    expect(await overtaken).toBe(-1);
    expect(await cache.get("j", load)).toBe(100);
  } finally {
    await listener.stop();
    await pool.end();
  }
});

test("keeps nothing while its listening connection is lost, and again once it listens anew", async () => {
  const { url, pool, cache, kept } = await counted();
  const listener = cache.listen(url, "things", log);
  try {
    await waitFor(() => kept("k"), 5000, "listening");
    await pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN things'`);
    await waitFor(async () => !(await kept("k")), 5000, "nothing kept once the connection is lost", 10);
    await waitFor(() => kept("k"), 5000, "listening again");
  } finally {
    await listener.stop();
    await pool.end();
  }
});

test("keeps at most maxEntries values, dropping the least recently read first", async () => {
  const { url, pool, cache, kept } = await counted(2);
  const listener = cache.listen(url, "things", log);
  try {
    await waitFor(() => kept("a"), 5000, "listening");
    expect(await kept("b")).toBe(true);
    expect(await kept("a")).toBe(true); // read again: b is now the least recently read
    expect(await kept("c")).toBe(true); // b made room
    expect(await kept("a")).toBe(true);
    const value = await cache.get("b", async () => -1);
    expect(value).toBe(-1); // loaded again: it was dropped
  } finally {
    await listener.stop();
    await pool.end();
  }
});
