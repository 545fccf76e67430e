import { PassThrough } from "node:stream";
import { prefixLines } from "../src/process-utils";

describe("prefixLines", () => {
  it("prefixes every line, writes once per chunk, and holds an unfinished line until its end", async () => {
    const writes: string[] = [];
    const input = new PassThrough();
    prefixLines(input, "[unit] ", { write: (text: string) => writes.push(text) });
    const ended = new Promise((r) => input.once("end", r));
    input.write("one\ntwo\r\nthr");
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(["[unit] one\n[unit] two\n"]);
    input.write("ee\n\nfo");
    input.end("ur");
    await ended;
    await new Promise((r) => setImmediate(r));
    expect(writes.join("")).toBe("[unit] one\n[unit] two\n[unit] three\n[unit] \n[unit] four\n");
  });

  it("keeps a character split across chunks whole", async () => {
    const writes: string[] = [];
    const input = new PassThrough();
    prefixLines(input, "> ", { write: (text: string) => writes.push(text) });
    const bytes = Buffer.from("аноним\n");
    input.write(bytes.subarray(0, 3));
    input.end(bytes.subarray(3));
    await new Promise((r) => input.once("end", r));
    await new Promise((r) => setImmediate(r));
    expect(writes.join("")).toBe("> аноним\n");
  });
});
