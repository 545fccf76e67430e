import { pollUntil } from "../../../test/support/poll";
import { createLogger, LineBatcher } from "@pgw/kit/runtime";

function recordingSink() {
  const writes: string[] = [];
  return { writes, sink: { write: (text: string) => writes.push(text) } };
}

describe("LineBatcher", () => {
  it("writes the lines of one moment together, once, after a short wait", async () => {
    const { writes, sink } = recordingSink();
    const lines = new LineBatcher(sink);
    lines.write("a\n");
    lines.write("b\n");
    lines.write("c\n");
    expect(writes).toEqual([]);
    await pollUntil(() => writes.length, (n) => n > 0, 2000, 5);
    expect(writes).toEqual(["a\nb\nc\n"]);
    lines.write("d\n");
    expect(writes).toHaveLength(1);
    await pollUntil(() => writes.length, (n) => n > 1, 2000, 5);
    expect(writes).toEqual(["a\nb\nc\n", "d\n"]);
  });

  it("writes a batch at once when it is large, without waiting", () => {
    const { writes, sink } = recordingSink();
    const lines = new LineBatcher(sink);
    const line = `${"x".repeat(999)}\n`;
    for (let i = 0; i < 9; i++) lines.write(line);
    expect(writes).toEqual([line.repeat(9)]);
    lines.flush();
    expect(writes).toHaveLength(1);
  });

  it("flushes on demand and then calls back, as pino's logger.flush expects", () => {
    const { writes, sink } = recordingSink();
    const lines = new LineBatcher(sink);
    lines.write("a\n");
    const done = jest.fn();
    lines.flush(done);
    expect(writes).toEqual(["a\n"]);
    expect(done).toHaveBeenCalledTimes(1);
  });
});

describe("createLogger", () => {
  it("shows a card number only by its first six and last four digits, wherever it is logged", () => {
    const { writes, sink } = recordingSink();
    const log = createLogger("test", "info", sink);
    log.info({ destination: { number: "4111111111111111" }, err: new Error("provider refused card 2200700012345678") }, "payout 4111111111111111 refused");
    log.flush();
    const line = writes.join("");
    expect(line).not.toMatch(/4111111111111111|2200700012345678/);
    expect(JSON.parse(line)).toMatchObject({ msg: "payout 411111******1111 refused", destination: { number: "411111******1111" }, err: { message: "provider refused card 220070******5678" } });
  });
});
