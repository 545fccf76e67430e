/**
 * Real PDFs for the receipts tests, made with pdf-lib: a receipt laid out like the provider
 * sandbox's, and the same receipt tampered with through an incremental update (the usual way an
 * editor changes a signed or generated PDF without rewriting it).
 */
import { createHash } from "node:crypto";
import zlib from "node:zlib";
import { PDFArray, PDFDocument, PDFName, PDFRef, PDFString, StandardFonts } from "pdf-lib";

export interface ReceiptPdfFacts {
  /** e.g. `1500.00 RUB` */
  amount: string;
  recipient: string;
  reference?: string;
  producer?: string;
  /** Extra lines after the standard ones. */
  extra?: string[];
}

/** A reader's limits as receipts' defaults set them, with a deadline for a machine running tests in parallel. */
export const READER_LIMITS = { timeoutMs: 15_000, maxDecodedBytes: 32 * 2 ** 20, maxRssMb: 128 };

/**
 * A one-page receipt PDF (one revision; a classic cross-reference table and no object streams,
 * unless `objectStreams`: then its objects are compressed in object streams).
 */
export async function receiptPdf(facts: ReceiptPdfFacts, { objectStreams = false } = {}): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.setTitle("Payment receipt");
  doc.setProducer(facts.producer ?? "pgw provider-sandbox");
  const fixed = new Date("2026-01-15T10:00:00Z");
  doc.setCreationDate(fixed);
  doc.setModificationDate(fixed);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([420, 260]);
  page.setFont(font);
  const lines = ["Payment receipt", `Amount: ${facts.amount}`, `Recipient: ${facts.recipient}`, `Reference: ${facts.reference ?? "SBX-TEST"}`, ...(facts.extra ?? [])];
  lines.forEach((line, i) => page.drawText(line, { x: 24, y: 220 - i * 24, size: i === 0 ? 16 : 11 }));
  return Buffer.from(await doc.save({ useObjectStreams: objectStreams }));
}

/**
 * The receipt with a link annotation over its first line whose action (/A) is `action`: JavaScript
 * or a launch of a program. `objectStreams` puts the objects in compressed object streams (what
 * pdf-lib writes by default); `escapeNames` writes the JavaScript action's names with an escape
 * (`/S /Java#53cript /J#53`, which every reader takes for `/S /JavaScript /JS`) in as many bytes, so
 * that no offset moves.
 */
export async function actionReceiptPdf(facts: ReceiptPdfFacts, action: "JavaScript" | "Launch", options: { objectStreams?: boolean; escapeNames?: boolean } = {}): Promise<Buffer> {
  const doc = await PDFDocument.load(await receiptPdf(facts));
  const padding = "    "; // room for the escapes' extra bytes
  const a = action === "JavaScript" ? { S: "JavaScript", JS: PDFString.of(`${padding}app.alert(1)`) } : { S: "Launch", F: PDFString.of("calc.exe") };
  doc.getPage(0).node.addAnnot(doc.context.register(doc.context.obj({ Type: "Annot", Subtype: "Link", Rect: [24, 190, 200, 210], Border: [0, 0, 0], A: a })));
  const pdf = Buffer.from(await doc.save({ useObjectStreams: options.objectStreams ?? false }));
  if (!options.escapeNames) return pdf;
  const escaped = pdf.toString("latin1").replace("/S /JavaScript", "/S /Java#53cript").replace(`/JS (${padding}`, "/J#53 (");
  if (escaped.length !== pdf.length || !escaped.includes("/Java#53cript")) throw new Error("the action's names were not escaped in place");
  return Buffer.from(escaped, "latin1");
}

/** The object number of the first page's (last) content stream. */
async function contentObjectNumber(pdf: Buffer): Promise<number> {
  const doc = await PDFDocument.load(pdf);
  const contents = doc.getPage(0).node.get(PDFName.of("Contents"));
  const ref = contents instanceof PDFArray ? contents.get(contents.size() - 1) : contents;
  if (!(ref instanceof PDFRef)) throw new Error("page contents are not an indirect reference");
  return ref.objectNumber;
}

/**
 * `original` with an incremental update appended that replaces its page content by the content of
 * the same receipt stating `forgedAmount`: every reader shows the forged amount, and the file now
 * has two revisions.
 */
export async function tamperedReceiptPdf(facts: ReceiptPdfFacts, forgedAmount: string): Promise<Buffer> {
  const original = await receiptPdf(facts);
  const forged = (await receiptPdf({ ...facts, amount: forgedAmount })).toString("latin1");
  const objectNumber = await contentObjectNumber(original);
  const start = forged.indexOf(`\n${objectNumber} 0 obj`) + 1;
  const end = forged.indexOf("endobj", start) + "endobj".length;
  const text = original.toString("latin1");
  const trailer = text.slice(text.lastIndexOf("trailer"));
  const root = /\/Root (\d+ \d+ R)/.exec(trailer)![1];
  const size = /\/Size (\d+)/.exec(trailer)![1];
  const prev = /startxref\s+(\d+)/.exec(trailer)![1];
  let update = "\n";
  const objectOffset = original.length + update.length;
  update += forged.slice(start, end) + "\n";
  const xrefOffset = original.length + update.length;
  update += `xref\n0 1\n0000000000 65535 f \n${objectNumber} 1\n${String(objectOffset).padStart(10, "0")} 00000 n \n`;
  update += `trailer\n<< /Size ${size} /Root ${root} /Prev ${prev} >>\nstartxref\n${xrefOffset}\n%%EOF\n`;
  return Buffer.concat([original, Buffer.from(update, "latin1")]);
}

/** A valid 1×1 PNG. */
export const PNG_1X1 = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");

/** The start of a JPEG (SOI + JFIF APP0); enough for content sniffing. */
export const JPEG_HEAD = Buffer.from("ffd8ffe000104a46494600010100000100010000ffd9", "hex");

/** A file that says it is a PDF (by name and declared type) but is an office document (zip). */
export const NOT_A_PDF = Buffer.concat([Buffer.from("504b0304140000000800", "hex"), Buffer.from("word/document.xml fake docx pretending to be receipt.pdf")]);

/**
 * A zlib stream (what FlateDecode holds) that inflates to `size` zero bytes (rounded up to 16 MiB)
 * from about a thousandth of that: one 16 MiB block of zeros compressed once and repeated.
 */
export function deflateBomb(size: number): Buffer {
  const block = 16 * 1024 * 1024;
  const count = Math.ceil(size / block);
  // A full flush ends the block byte-aligned and refers to nothing before it: copies concatenate.
  const compressed = zlib.deflateRawSync(Buffer.alloc(block), { level: 9, memLevel: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const adler32 = Buffer.alloc(4);
  adler32.writeUInt32BE((((count * block) % 65521) * 65536 + 1) >>> 0); // of zeros only: a = 1, b = length
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...Array<Buffer>(count).fill(compressed), Buffer.from([0x03, 0x00]), adler32]);
}

/** RC4 (the cipher of PDF's standard security handler, revision 2), which OpenSSL 3 no longer offers. */
function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) & 255;
    [s[i], s[j]] = [s[j], s[i]];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + s[i]) & 255;
    [s[i], s[j]] = [s[j], s[i]];
    out[n] = data[n] ^ s[(s[i] + s[j]) & 255];
  }
  return out;
}

/** A receipt (as receiptPdf) whose page has one more content stream, inflating to `size` bytes. */
export async function bombReceiptPdf(facts: ReceiptPdfFacts, size: number): Promise<Buffer> {
  const doc = await PDFDocument.load(await receiptPdf(facts));
  const bomb = doc.context.register(doc.context.stream(deflateBomb(size), { Filter: "FlateDecode" }));
  doc.getPage(0).node.addContentStream(bomb);
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** A PDF of `objects` (object n + 1 is `objects[n]`) with its cross-reference table. */
export function assemblePdf(objects: (string | Buffer)[], trailer: string): Buffer {
  const parts: Buffer[] = [Buffer.from("%PDF-1.7\n")];
  let at = parts[0].length;
  const offsets = objects.map((body, n) => {
    const part = Buffer.concat([Buffer.from(`${n + 1} 0 obj\n`), typeof body === "string" ? Buffer.from(body, "latin1") : body, Buffer.from("\nendobj\n")]);
    parts.push(part);
    return (at += part.length) - part.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} ${trailer} >>\nstartxref\n${at}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/**
 * A one-page PDF encrypted with an empty user password (standard security handler, revision 2,
 * which every reader opens without asking) whose page content inflates to `size` bytes: its
 * streams are ciphertext to anything that does not decrypt them first.
 */
export function encryptedBombPdf(size: number): Buffer {
  const padding = Buffer.from("28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a", "hex");
  const owner = Buffer.alloc(32, 7);
  const id = Buffer.alloc(16, 9);
  const permissions = Buffer.alloc(4);
  permissions.writeInt32LE(-4);
  // ISO 32000-1 §7.6.3.3, algorithms 2 (file key), 4 (U of revision 2) and 1 (object key).
  const fileKey = createHash("md5").update(Buffer.concat([padding, owner, permissions, id])).digest().subarray(0, 5);
  const user = rc4(fileKey, padding);
  const objectKey = createHash("md5").update(Buffer.concat([fileKey, Buffer.from([4, 0, 0, 0, 0])])).digest().subarray(0, 10);
  const content = rc4(objectKey, deflateBomb(size));
  return assemblePdf(
    [
      "<< /Type /Catalog /Pages 2 0 R >>",
      "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 260] /Contents 4 0 R >>",
      Buffer.concat([Buffer.from(`<< /Length ${content.length} /Filter /FlateDecode >>\nstream\n`), content, Buffer.from("\nendstream")]),
      `<< /Filter /Standard /V 1 /R 2 /O <${owner.toString("hex")}> /U <${user.toString("hex")}> /P -4 >>`,
    ],
    `/Root 1 0 R /Encrypt 5 0 R /ID [<${id.toString("hex")}> <${id.toString("hex")}>]`,
  );
}
