import { fieldsWithNul } from "./json-body";

describe("fieldsWithNul", () => {
  it("names every key or string value holding U+0000, nested ones by path", () => {
    expect(fieldsWithNul({ a: "ok", b: "x\u0000", c: { d: ["fine", "\u0000"], ["e\u0000"]: 1 }, n: 5, z: null })).toEqual(["b", "c.d[1]", "c.e\u0000"]);
    expect(fieldsWithNul("\u0000")).toEqual(["body"]);
  });

  it("finds nothing in clean JSON", () => {
    expect(fieldsWithNul({ merchant_operation_id: "аноним ✓", list: [1, "two", { three: true }] })).toEqual([]);
  });
});
