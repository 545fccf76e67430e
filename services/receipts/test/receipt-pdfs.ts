/**
 * Real PDFs for the receipts tests, made with pdf-lib: a receipt laid out like the provider
 * sandbox's, and the same receipt tampered with through an incremental update (the usual way an
 * editor changes a signed or generated PDF without rewriting it).
 */
import { PDFArray, PDFDocument, PDFName, PDFRef, StandardFonts } from "pdf-lib";

export interface ReceiptPdfFacts {
  /** e.g. `1500.00 RUB` */
  amount: string;
  recipient: string;
  reference?: string;
  producer?: string;
  /** Extra lines after the standard ones. */
  extra?: string[];
}

/** A one-page receipt PDF (classic cross-reference table, no object streams, one revision). */
export async function receiptPdf(facts: ReceiptPdfFacts): Promise<Buffer> {
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
  return Buffer.from(await doc.save({ useObjectStreams: false }));
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
