/**
 * What PDFs' streams decode to, measured within a limit before any parser reads them: every filter
 * that expands data, chained or hidden as readers would still decode it.
 */
import zlib from "node:zlib";
import { PDFDocument } from "pdf-lib";
import { decodeStreams, PdfDecodeLimitError } from "../src/connectors/pdf-streams";
import { assemblePdf, deflateBomb, receiptPdf } from "./receipt-pdfs";

const MiB = 2 ** 20;
const measure = (pdf: Buffer, limit = MiB, signal = new AbortController().signal) => decodeStreams(pdf, limit, signal);
/** A stream object's body: `dict` entries, /Length, `data`. */
const stream = (dict: string, data: Buffer, length: string | number = data.length) => Buffer.concat([Buffer.from(`<< ${dict} /Length ${length} >>\nstream\n`), data, Buffer.from("\nendstream")]);
const pdfWith = (...bodies: (string | Buffer)[]) => assemblePdf(["<< /Type /Catalog >>", ...bodies], "/Root 1 0 R");
const zlibWrapped = (raw: Buffer) => Buffer.concat([Buffer.from([0x78, 0xda]), raw]);

/** LZW codes (9 to 12 bits, early change) defining ever longer runs of zeros, then repeating the longest: `repeats` × 3839 zeros and more. */
function lzwBomb(repeats: number): Buffer {
  const codes = [256, 0, ...Array.from({ length: 4096 - 258 }, (_, i) => 258 + i), ...Array<number>(repeats).fill(4095), 257];
  const bytes: number[] = [];
  let [next, buffer, bits] = [258, 0, 0];
  for (const [i, code] of codes.entries()) {
    const width = Math.min(12, 32 - Math.clz32(next + 1));
    buffer = (buffer << width) | code;
    for (bits += width; bits >= 8; bits -= 8) bytes.push((buffer >>> (bits - 8)) & 0xff);
    buffer &= (1 << bits) - 1;
    if (i >= 2 && code !== 257 && next < 4096) next++; // every code after the first defines an entry
  }
  if (bits > 0) bytes.push((buffer << (8 - bits)) & 0xff);
  return Buffer.from(bytes);
}

describe("decodeStreams", () => {
  it("measures a genuine receipt, and reads its object streams (compressed objects) as text", async () => {
    const plain = await measure(await receiptPdf({ amount: "1500.00 RUB", recipient: "4111111111111111" }));
    expect(plain.bytes).toBeGreaterThan(100);
    expect(plain.bytes).toBeLessThan(64 * 1024);
    expect(plain.objectStreams).toEqual([]);
    const doc = await PDFDocument.load(await receiptPdf({ amount: "1500.00 RUB", recipient: "4111111111111111" }));
    const compressed = await measure(Buffer.from(await doc.save({ useObjectStreams: true })));
    expect(compressed.objectStreams.join("")).toContain("/Type /Page");
  });

  it.each<[string, string, () => Buffer]>([
    ["deflate", "/Filter /FlateDecode", () => deflateBomb(64 * MiB)],
    ["deflate twice", "/Filter [/FlateDecode /FlateDecode]", () => zlib.deflateSync(deflateBomb(1024 * MiB))],
    ["hex, then deflate", "/Filter [/ASCIIHexDecode /FlateDecode]", () => Buffer.from(deflateBomb(64 * MiB).toString("hex") + ">")],
    ["deflate reaching back before its start (PDF.js reads zeros there)", "/Filter /FlateDecode", () => zlibWrapped(zlib.deflateRawSync(Buffer.alloc(64 * MiB), { dictionary: Buffer.alloc(32 * 1024) }))],
    ["brotli", "/Filter /BrotliDecode", () => zlib.brotliCompressSync(Buffer.alloc(8 * MiB), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } })],
    ["LZW", "/Filter /LZWDecode", () => lzwBomb(1000)],
    ["run-length", "/Filter /RunLengthDecode", () => Buffer.alloc(64 * 1024, Buffer.from([129, 0]))],
    ["a filter given by reference", "/Filter 3 0 R", () => deflateBomb(64 * MiB)],
  ])("refuses %s decoding past the limit", async (_name, filter, data) => {
    const bodies = [stream(filter, data()), "/FlateDecode"];
    await expect(measure(pdfWith(...bodies))).rejects.toThrow(new PdfDecodeLimitError("its streams decode to more than 1 MiB"));
  });

  it("takes exactly the limit, not a byte more", async () => {
    const decodingTo = (size: number) => pdfWith(stream("/Filter /FlateDecode", zlib.deflateSync(Buffer.alloc(size))));
    for (const limit of [1000, 3 * MiB]) {
      await expect(measure(decodingTo(limit), limit)).resolves.toMatchObject({ bytes: limit });
      await expect(measure(decodingTo(limit + 1), limit)).rejects.toThrow(PdfDecodeLimitError);
    }
  });

  it("counts every stream of the document towards one limit", async () => {
    const half = zlib.deflateSync(Buffer.alloc(MiB / 2 + 1));
    await expect(measure(pdfWith(stream("/Filter /FlateDecode", half)))).resolves.toMatchObject({ bytes: MiB / 2 + 1 });
    await expect(measure(pdfWith(stream("/Filter /FlateDecode", half), stream("/Filter /FlateDecode", half)))).rejects.toThrow(PdfDecodeLimitError);
  });

  it("counts deflate data whole whatever /Length says, and what came before a corrupt tail", async () => {
    // Its data holds `endstream` (a stored block) and its /Length cannot be resolved: readers may still read past it.
    const hidden = Buffer.from("endstream");
    const stored = Buffer.from([0x00, hidden.length, 0, ~hidden.length & 0xff, 0xff, ...hidden]);
    const withEndstream = Buffer.concat([Buffer.from([0x78, 0xda]), stored, deflateBomb(64 * MiB).subarray(2)]);
    await expect(measure(pdfWith(stream("/Filter /FlateDecode", withEndstream, "9 0 R")))).rejects.toThrow(PdfDecodeLimitError);
    const valid = zlib.deflateSync(Buffer.alloc(4 * MiB));
    const corrupt = Buffer.concat([valid.subarray(0, valid.length - 16), Buffer.alloc(16, 0xff)]);
    await expect(measure(pdfWith(stream("/Filter /FlateDecode", corrupt)))).rejects.toThrow(PdfDecodeLimitError);
  });

  it("decodes LZW, ASCII85 and run-length data as readers do", async () => {
    const zeros = await measure(pdfWith(stream("/Filter /LZWDecode", lzwBomb(2))), 64 * MiB);
    expect(zeros.bytes).toBe(1 + (2 + 3839) * (4096 - 258) / 2 + 2 * 3839);
    const [a85, rl] = [Buffer.from("9jqo^BlbD-BleB1DJ+*+F(f,qz9jqo~>"), Buffer.from([2, 65, 66, 67, 253, 68, 128])];
    const objectStreams = (filter: string, data: Buffer) => measure(pdfWith(stream(`/Type /ObjStm ${filter}`, data))).then((m) => m.objectStreams);
    expect(await objectStreams("/Filter /ASCII85Decode", a85)).toEqual(["Man is distinguished\0\0\0\0Man"]);
    expect(await objectStreams("/Filter /RunLengthDecode", rl)).toEqual(["ABCDDDD"]);
  });

  it("refuses a document whose stream filters cannot be read, and stops at its deadline", async () => {
    await expect(measure(pdfWith(stream("/Filter 9 0 R", Buffer.from("x"))))).rejects.toThrow(new PdfDecodeLimitError("the filters of object 2 cannot be read"));
    const many = Array.from({ length: 5000 }, () => stream("/Filter /FlateDecode", zlib.deflateSync(Buffer.from("BT ET"))));
    await expect(measure(pdfWith(...many), MiB, AbortSignal.abort())).rejects.toThrow(/aborted/);
  });
});
