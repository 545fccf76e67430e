import fc from "fast-check";
import { detectFileType, normaliseDeclaredType, uploadedFileType } from "./file-type";

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p))));

describe("detectFileType reads the magic numbers, not the name or the declared type", () => {
  it.each([
    ["PDF header", bytes("%PDF-1.7\n..."), "application/pdf"],
    ["PDF 2.0 header", bytes("%PDF-2.0"), "application/pdf"],
    ["JPEG (JFIF)", bytes([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), "image/jpeg"],
    ["JPEG (Exif)", bytes([0xff, 0xd8, 0xff, 0xe1]), "image/jpeg"],
    ["PNG", bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), "image/png"],
    ["PDF header not at offset 0", bytes(" %PDF-1.7"), null],
    ["truncated PDF header", bytes("%PDF"), null],
    ["zip (docx renamed .pdf)", bytes([0x50, 0x4b, 0x03, 0x04]), null],
    ["GIF", bytes("GIF89a"), null],
    ["HTML", bytes("<html>%PDF-1.7"), null],
    ["PNG signature cut short", bytes([0x89, 0x50, 0x4e, 0x47]), null],
    ["empty", bytes(), null],
  ])("%s", (_name, content, expected) => {
    expect(detectFileType(content)).toBe(expected);
  });

  it("never accepts bytes that start with none of the signatures", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
        const type = detectFileType(b);
        const head = Buffer.from(b).toString("latin1");
        return type === null || head.startsWith("%PDF-") || (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) || (b[0] === 0x89 && head.slice(1, 4) === "PNG");
      }),
    );
  });

  it("normalises a declared type", () => {
    expect(normaliseDeclaredType(" Application/PDF; charset=binary")).toBe("application/pdf");
    expect(normaliseDeclaredType("")).toBe("");
  });
});

describe("uploadedFileType: the bytes when recognised, else unrecognised bytes sent as an accepted type", () => {
  it.each([
    ["a PDF sent as anything", bytes("%PDF-1.7"), "text/plain", "application/pdf"],
    ["a JPEG sent as a PDF", bytes([0xff, 0xd8, 0xff, 0xe0]), "application/pdf", "image/jpeg"],
    ["random bytes sent as a PDF", bytes("hello"), "Application/PDF; name=x", "application/octet-stream"],
    ["random bytes sent as a PNG", bytes("hello"), "image/png", "application/octet-stream"],
    ["random bytes sent as text", bytes("hello"), "text/plain", null],
    ["random bytes sent as nothing", bytes("hello"), "", null],
  ])("%s", (_name, content, declared, expected) => {
    expect(uploadedFileType(content, declared)).toBe(expected);
  });
});
