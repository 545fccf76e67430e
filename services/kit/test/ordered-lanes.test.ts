import { pollUntil } from "../../../test/support/poll";
import { OrderedLanes } from "@pgw/kit/events";

function gate() {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

test("tasks of one key run one after another in hand-in order; other keys overtake them", async () => {
  const lanes = new OrderedLanes(4);
  const log: string[] = [];
  const first = gate();
  await lanes.run("a", async () => {
    await first.promise;
    log.push("a1");
  });
  await lanes.run("a", async () => void log.push("a2"));
  await lanes.run("b", async () => void log.push("b1"));
  // b1, handed in after a2, has run: a2 would have run before it, had it not waited behind a1.
  expect(await pollUntil(() => [...log], (l) => l.includes("b1"), 2000, 5)).toEqual(["b1"]);
  first.open();
  await lanes.drained();
  expect(log).toEqual(["b1", "a1", "a2"]);
});

test("run waits while `limit` tasks are unfinished, so a feeding loop cannot run ahead", async () => {
  const lanes = new OrderedLanes(2);
  const gates = [gate(), gate(), gate()];
  let running = 0;
  let most = 0;
  const task = (g: { promise: Promise<void> }) => async () => {
    most = Math.max(most, ++running);
    await g.promise;
    running--;
  };
  await lanes.run("x", task(gates[0]));
  await lanes.run("y", task(gates[1]));
  let third = false;
  const handing = lanes.run("z", task(gates[2])).then(() => (third = true));
  // The same run on lanes with room, handed in after it, has resolved: the third one would have too.
  let roomy = false;
  void new OrderedLanes(4).run("z", async () => undefined).then(() => (roomy = true));
  expect(await pollUntil(() => roomy, Boolean, 2000, 5)).toBe(true);
  expect(third).toBe(false);
  gates[0].open();
  await handing;
  expect(third).toBe(true);
  gates[1].open();
  gates[2].open();
  await lanes.drained();
  expect(most).toBe(2);
});

test("a limit below one is refused", () => {
  expect(() => new OrderedLanes(0)).toThrow(/positive integer/);
});
