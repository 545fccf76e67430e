import { countRevisions, inspectParsedPdf, mergeFindings, scanPdfBytes, xrefOffsetValid, type ParsedPdf } from "./pdf-structure";

const codes = (text: string, objectStreams: string[] = []) => scanPdfBytes(Buffer.from(text, "latin1"), objectStreams).map((f) => f.code);

/** A tiny PDF-shaped text whose startxref points at its xref table. */
function pdfText(body: string, extra = ""): string {
  const head = `%PDF-1.7\n1 0 obj\n<< /Type /Catalog ${body} >>\nendobj\n`;
  return `${head}xref\n0 2\ntrailer\n<< /Root 1 0 R ${extra}>>\nstartxref\n${head.length}\n%%EOF\n`;
}

describe("scanPdfBytes", () => {
  it.each([
    ["a single clean revision", pdfText(""), []],
    ["JavaScript", pdfText("/OpenAction << /S /JavaScript /JS (app.alert(1)) >>"), ["javascript"]],
    ["a launch action", pdfText("/OpenAction << /S /Launch >>"), ["javascript"]],
    ["an embedded file", pdfText("/Names << /EmbeddedFiles 2 0 R >>"), ["embedded_file"]],
    ["a name that only starts like /JS", pdfText("/JSON true"), []],
    ["JavaScript under escaped names", pdfText("/OpenAction << /S /Java#53cript /J#53 (app.alert(1)) >>"), ["javascript"]],
    ["an annotation's launch action, escaped", pdfText("/Annots [<< /Subtype /Link /A << /S /L#61unch >> >>]"), ["javascript"]],
    ["embedded files under an escaped name", pdfText("/Names << /Embedded#46iles 2 0 R >>"), ["embedded_file"]],
    ["a trailer pointing to a previous revision", pdfText("", "/Prev 10 "), ["incremental_update"]],
    ["two revisions", pdfText("") + "xref\n0 1\ntrailer\n<< >>\nstartxref\n9\n%%EOF\n", ["incremental_update"]],
    ["a last startxref pointing nowhere", pdfText("") + "startxref\n3\n%%EOF\n", ["edited_in_place", "incremental_update"]],
    ["no end-of-file marker", "%PDF-1.7\n1 0 obj\n<< >>\nendobj\n", ["unreadable"]],
  ])("%s", (_name, text, expected) => {
    expect(codes(text)).toEqual(expected);
  });

  it("reads names in compressed objects (decoded object streams) as in the bytes", () => {
    expect(codes(pdfText(""), ["3 0 4 40 << /Type /Annot /Subtype /Link /A << /S /JavaScript /JS 5 0 R >> >> (x)"])).toEqual(["javascript"]);
    expect(codes(pdfText(""), ["<< /Type /Annot /AA << /O << /S /Launch /F (calc) >> >> >>"])).toEqual(["javascript"]);
    expect(codes(pdfText(""), ["<< /Type /Page /Contents 4 0 R >>"])).toEqual([]);
  });

  it("counts revisions and checks the cross-reference offset", () => {
    expect(countRevisions("%%EOF x %%EOF")).toBe(2);
    expect(xrefOffsetValid(pdfText(""))).toBe(true);
    expect(xrefOffsetValid(pdfText("").replace("/Catalog", "/Catalog  "))).toBe(false);
    expect(xrefOffsetValid("%PDF-1.5\n7 0 obj\n<< /Type /XRef >>\nstartxref\n9\n%%EOF")).toBe(true);
  });
});

describe("inspectParsedPdf", () => {
  const base: ParsedPdf = { text: "Amount: 1.00", producer: "Bank receipts 2.1", pages: 1, hasJavaScript: false, attachments: 0, objectStreams: [] };
  it.each([
    ["a bank's generator", {}, []],
    ["an image editor", { producer: "Adobe Photoshop 25.0" }, ["suspicious_producer"]],
    ["an online PDF editor as creator", { creator: "Sejda PDF Desktop" }, ["suspicious_producer"]],
    ["scripts", { hasJavaScript: true }, ["javascript"]],
    ["attachments", { attachments: 2 }, ["embedded_file"]],
    ["no text layer", { text: " \n" }, ["no_text"]],
  ])("%s", (_name, patch, expected) => {
    expect(inspectParsedPdf({ ...base, ...patch }).map((f) => f.code)).toEqual(expected);
  });

  it("merges findings without repeating a code", () => {
    expect(mergeFindings([{ code: "javascript", detail: "a" }], [{ code: "javascript", detail: "b" }, { code: "no_text" }])).toEqual([{ code: "javascript", detail: "a" }, { code: "no_text" }]);
  });
});
