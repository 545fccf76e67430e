import { LONE_SURROGATE_ISSUE, NUL_ISSUE, unstorableText } from "@pgw/contracts";

const fields = (value: unknown) => unstorableText(value).map((d) => d.field);

describe("unstorableText", () => {
  it("names every key or string value holding U+0000, nested ones by path", () => {
    expect(fields({ a: "ok", b: "x\u0000", c: { d: ["fine", "\u0000"], ["e\u0000"]: 1 }, n: 5, z: null })).toEqual(["b", "c.d[1]", "c.e\u0000"]);
    expect(unstorableText("\u0000")).toEqual([{ field: "body", issue: NUL_ISSUE }]);
  });

  it("names text holding a lone UTF-16 surrogate, which UTF-8 cannot carry (two such keys would both be stored as U+FFFD)", () => {
    const body = JSON.parse(`{"merchant_operation_id":"s1\\ud800","client_id":"\\udc00x","name":"😀 ok","k\\ud801":"v","pair":"\\ud83d\\ude00"}`);
    expect(unstorableText(body)).toEqual([
      { field: "merchant_operation_id", issue: LONE_SURROGATE_ISSUE },
      { field: "client_id", issue: LONE_SURROGATE_ISSUE },
      { field: "k\ud801", issue: LONE_SURROGATE_ISSUE },
    ]);
  });

  it("walks bodies nested far deeper than the call stack allows (a 64 KiB body can nest 30,000 levels)", () => {
    const deep = JSON.parse(`{"a":${"[".repeat(30_000)}"x\\u0000"${"]".repeat(30_000)}}`);
    expect(fields(deep)).toEqual([`a${"[0]".repeat(30_000)}`]);
    expect(fields(JSON.parse(`{"a":${"[".repeat(30_000)}${"]".repeat(30_000)}}`))).toEqual([]);
  });

  it("finds nothing in clean JSON", () => {
    expect(fields({ merchant_operation_id: "аноним ✓ 😀", list: [1, "two", { three: true }] })).toEqual([]);
  });
});

describe("unstorableText on protobuf messages", () => {
  it("looks into nested messages and oneofs but not into bytes", () => {
    const message = { $typeName: "x.Req", shopId: "s\u0000", ref: { ref: { case: "merchantOperationId", value: "m\u0000" } }, content: new Uint8Array([0, 0, 0]) };
    expect(fields(message)).toEqual(["shopId", "ref.ref.value"]);
  });
});
