import { createLogger } from "@pgw/kit/runtime";
import { runShutdownSteps } from "@pgw/kit/runtime";

afterEach(() => jest.useRealTimers());

test("runs the steps in order and names one still running every 5 s until it ends", async () => {
  jest.useFakeTimers();
  const lines: string[] = [];
  const log = createLogger("shutdown-test", "warn", { write: (text: string) => lines.push(text) });
  const order: string[] = [];
  let finishSlow!: () => void;
  const done = runShutdownSteps(log, [
    ["fast", async () => void order.push("fast")],
    ["slow", () => new Promise<void>((resolve) => (finishSlow = () => (order.push("slow"), resolve())))],
    ["last", async () => void order.push("last")],
  ]);
  await jest.advanceTimersByTimeAsync(11_000);
  finishSlow();
  await done;
  await jest.advanceTimersByTimeAsync(20_000);
  log.flush();
  const warnings = lines.join("").trim().split("\n").map((line) => JSON.parse(line));
  expect(order).toEqual(["fast", "slow", "last"]);
  expect(warnings.map((w) => [w.step, w.msg])).toEqual([
    ["slow", "shutdown: step still running"],
    ["slow", "shutdown: step still running"],
  ]);
});
