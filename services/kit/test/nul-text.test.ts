import { fieldsWithNul } from "../src/nul-text";

describe("fieldsWithNul", () => {
  it("names every key or string value holding U+0000, nested ones by path", () => {
    expect(fieldsWithNul({ a: "ok", b: "x\u0000", c: { d: ["fine", "\u0000"], ["e\u0000"]: 1 }, n: 5, z: null })).toEqual(["b", "c.d[1]", "c.e\u0000"]);
    expect(fieldsWithNul("\u0000")).toEqual(["body"]);
  });

  it("walks bodies nested far deeper than the call stack allows (a 64 KiB body can nest 30,000 levels)", () => {
    const deep = JSON.parse(`{"a":${"[".repeat(30_000)}"x\\u0000"${"]".repeat(30_000)}}`);
    expect(fieldsWithNul(deep)).toEqual([`a${"[0]".repeat(30_000)}`]);
    expect(fieldsWithNul(JSON.parse(`{"a":${"[".repeat(30_000)}${"]".repeat(30_000)}}`))).toEqual([]);
  });

  it("finds nothing in clean JSON", () => {
    expect(fieldsWithNul({ merchant_operation_id: "аноним ✓", list: [1, "two", { three: true }] })).toEqual([]);
  });
});

describe("fieldsWithNul on protobuf messages", () => {
  it("looks into nested messages and oneofs but not into bytes", () => {
    const message = { $typeName: "x.Req", shopId: "s\u0000", ref: { ref: { case: "merchantOperationId", value: "m\u0000" } }, content: new Uint8Array([0, 0, 0]) };
    expect(fieldsWithNul(message)).toEqual(["shopId", "ref.ref.value"]);
  });
});
