import { concurrencyLimit } from "@pgw/kit/runtime";

/** A task that runs until `finish` is called, recording when it starts. */
function controlled(started: string[]) {
  const finishers = new Map<string, () => void>();
  const task = (name: string, fail = false) => () => {
    started.push(name);
    return new Promise<string>((resolve, reject) => finishers.set(name, () => (fail ? reject(new Error(`${name} fails`)) : resolve(name))));
  };
  /** Finishes `name` and lets the slot it frees pass on. */
  const finish = async (name: string) => {
    finishers.get(name)!();
    await new Promise((r) => setImmediate(r));
  };
  return { task, finish };
}

test("runs at most `limit` tasks at once, one key's in arrival order, and frees the slot of a task that throws", async () => {
  const started: string[] = [];
  const { task, finish } = controlled(started);
  const limiter = concurrencyLimit(2);
  const results = Promise.allSettled(["a0", "a1", "a2", "a3"].map((name) => limiter.run("a", task(name, name === "a1"))));
  await finish("a0");
  expect(started).toEqual(["a0", "a1", "a2"]);
  await finish("a1");
  expect(started).toEqual(["a0", "a1", "a2", "a3"]);
  await finish("a2");
  await finish("a3");
  expect((await results).map((r) => (r.status === "fulfilled" ? r.value : "failed"))).toEqual(["a0", "failed", "a2", "a3"]);
});

test("a key with many tasks queued delays another key's task by one slot at most", async () => {
  const started: string[] = [];
  const { task, finish } = controlled(started);
  const limiter = concurrencyLimit(1);
  const all = [...["a1", "a2", "a3"].map((name) => limiter.run("slow shop", task(name))), limiter.run("other shop", task("b1"))];
  expect(started).toEqual(["a1"]);
  await finish("a1");
  expect(started).toEqual(["a1", "b1"]); // not behind a2 and a3
  for (const name of ["b1", "a2", "a3"]) await finish(name);
  expect(started).toEqual(["a1", "b1", "a2", "a3"]);
  await Promise.all(all);
});

test("a freed slot goes to the key with the fewest tasks running, then to the one served longest ago", async () => {
  const started: string[] = [];
  const { task, finish } = controlled(started);
  const limiter = concurrencyLimit(2);
  const all = [
    ...["a1", "a2", "a3"].map((name) => limiter.run("a", task(name))),
    ...["b1", "b2"].map((name) => limiter.run("b", task(name))),
    limiter.run("c", task("c1")),
  ];
  expect(started).toEqual(["a1", "a2"]);
  await finish("a1"); // a has one running, b and c none: b was queued first
  await finish("a2"); // a none, c none, b one: c (never served) before a (served)
  expect(started).toEqual(["a1", "a2", "b1", "c1"]);
  await finish("b1"); // a and b none running; a was served longer ago
  expect(started.at(-1)).toBe("a3");
  for (const name of ["c1", "a3", "b2"]) await finish(name);
  expect(started).toEqual(["a1", "a2", "b1", "c1", "a3", "b2"]);
  await Promise.all(all);
});

test("refuses a limit that is not a positive integer", () => {
  expect(() => concurrencyLimit(0)).toThrow(/positive integer/);
  expect(() => concurrencyLimit(1.5)).toThrow(/positive integer/);
});
