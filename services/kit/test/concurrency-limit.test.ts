import { concurrencyLimit } from "../src/concurrency-limit";

const tick = () => new Promise((r) => setTimeout(r, 5));

test("runs at most `limit` tasks at once, starts the waiting ones in arrival order, and frees the slot of a task that throws", async () => {
  const limiter = concurrencyLimit(2);
  let running = 0;
  let most = 0;
  const started: number[] = [];
  const task = (i: number) => async () => {
    started.push(i);
    running++;
    most = Math.max(most, running);
    await tick();
    running--;
    if (i === 1) throw new Error("task 1 fails");
    return i;
  };
  const results = await Promise.allSettled([0, 1, 2, 3, 4].map((i) => limiter.run(task(i))));
  expect(most).toBe(2);
  expect(started).toEqual([0, 1, 2, 3, 4]);
  expect(results.map((r) => (r.status === "fulfilled" ? r.value : "failed"))).toEqual([0, "failed", 2, 3, 4]);
});

test("refuses a limit that is not a positive integer", () => {
  expect(() => concurrencyLimit(0)).toThrow(/positive integer/);
  expect(() => concurrencyLimit(1.5)).toThrow(/positive integer/);
});
