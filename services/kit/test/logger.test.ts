import { LineBatcher } from "../src/logger";

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
    await new Promise((r) => setTimeout(r, 120));
    expect(writes).toEqual(["a\nb\nc\n"]);
    lines.write("d\n");
    await new Promise((r) => setTimeout(r, 120));
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
