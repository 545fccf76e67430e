import { cached } from "./config-cache";

/** A lookup answering from a map, counting the loads per code. */
function providersTable(rows: Record<string, object>) {
  const lookups = new Map<string, number>();
  const load = async (code: string) => {
    lookups.set(code, (lookups.get(code) ?? 0) + 1);
    return rows[code];
  };
  return { load, lookups };
}

test("a provider found is kept for the TTL; a code that finds nothing is asked again, never kept", async () => {
  const { load, lookups } = providersTable({ sbx: { id: "p1", code: "sbx" } });
  const byCode = cached(60_000, (code: string) => code, load);
  expect(await byCode("sbx")).toMatchObject({ code: "sbx" });
  expect(await byCode("sbx")).toMatchObject({ code: "sbx" });
  expect(lookups.get("sbx")).toBe(1);
  expect(await byCode("nope")).toBeUndefined();
  expect(await byCode("nope")).toBeUndefined();
  expect(lookups.get("nope")).toBe(2);
});

test("a failed load is forgotten: the next ask loads again", async () => {
  let calls = 0;
  const byCode = cached(60_000, (code: string) => code, async () => {
    calls++;
    if (calls === 1) throw new Error("database down");
    return { code: "sbx" };
  });
  await expect(byCode("sbx")).rejects.toThrow("database down");
  expect(await byCode("sbx")).toEqual({ code: "sbx" });
  expect(calls).toBe(2);
});

test("an entry older than the TTL is loaded again", async () => {
  const { load, lookups } = providersTable({ sbx: { code: "sbx" } });
  const byCode = cached(0, (code: string) => code, load);
  await byCode("sbx");
  await byCode("sbx");
  expect(lookups.get("sbx")).toBe(2);
});
