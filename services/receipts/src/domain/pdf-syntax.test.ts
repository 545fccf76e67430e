import fc from "fast-check";
import { decodeName, namesIn, readPdfObjects } from "./pdf-syntax";

/** readPdfObjects run to its end. */
function pdfObjects(text: string) {
  const reading = readPdfObjects(text);
  let step = reading.next();
  while (!step.done) step = reading.next();
  return step.value;
}

describe("names", () => {
  it("decodes #xx escapes, and reads every name of a text so", () => {
    expect(decodeName("Java#53cript")).toBe("JavaScript");
    expect(decodeName("A#20B#2")).toBe("A B#2");
    expect([...namesIn("<< /S /Java#53cript /J#53 (x) /Type/Action>>")]).toEqual(["S", "JavaScript", "JS", "Type", "Action"]);
  });
});

describe("pdfObjects", () => {
  const stream = (header: string, data: string) => `${header}\nstream\r\n${data}\nendstream\nendobj\n`;

  it("reads objects, resolves references and finds each stream's data by its /Length", () => {
    const text = `%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Kids [2 0 R] /Label (a ) >> string) >>\nendobj\n` + stream("2 0 obj\n<< /Length 5 /Filter [/Fl#61teDecode /A85] >>", "abcde") + "3 0 obj 42 endobj\n";
    const { objects, streams } = pdfObjects(text)!;
    expect(objects.get(1)).toEqual(new Map<string, unknown>([["Type", { name: "Catalog" }], ["Kids", [{ ref: 2 }]], ["Label", null]]));
    expect(objects.get(3)).toBe(42);
    expect(streams).toHaveLength(1);
    const [{ objectNumber, dict, start, end }] = streams;
    expect(objectNumber).toBe(2);
    expect(dict.get("Filter")).toEqual([{ name: "FlateDecode" }, { name: "A85" }]);
    expect(text.slice(start, end)).toBe("abcde");
  });

  it("takes an indirect /Length, and one that does not end at endstream is not trusted", () => {
    const indirect = stream("1 0 obj << /Length 2 0 R >>", "0123456789") + "2 0 obj 10 endobj";
    const [a] = pdfObjects(indirect)!.streams;
    expect(indirect.slice(a.start, a.end)).toBe("0123456789");
    const lying = stream("1 0 obj << /Length 3 >>", "0123456789");
    const [b] = pdfObjects(lying)!.streams;
    expect(lying.slice(b.start, b.end)).toBe("0123456789\n");
  });

  it("skips what does not parse, and gives up on objects that never close instead of rereading the file", () => {
    expect(pdfObjects("1 0 obj << /A [ 1 2 >> endobj 2 0 obj 7 endobj")!.objects).toEqual(new Map([[2, 7]]));
    expect(pdfObjects(`1 0 obj ${"[".repeat(100)} ${"]".repeat(100)} endobj`)!.objects.size).toBe(0);
    expect(pdfObjects(" 1 0 obj (".repeat(20_000))).toBeNull();
  });

  it("never throws, whatever the bytes", () => {
    const pieces = fc.constantFrom("1 0 obj", " ", "<<", ">>", "[", "]", "(", ")", "\\", "/Length", "/Filter", "/F#6c", " 3 0 R", "12", "stream\n", "endstream", "endobj", "%", "\n", "<0a>");
    fc.assert(fc.property(fc.array(fc.oneof(pieces, fc.string()), { maxLength: 60 }), (parts) => void pdfObjects(parts.join(""))), { numRuns: 2000 });
  });
});
