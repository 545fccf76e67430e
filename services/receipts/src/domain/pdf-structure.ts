/**
 * Structural signs of tampering visible in a PDF's bytes (pure; the parsed view comes from
 * connectors/pdf-reader.ts). A receipt is written once by its bank or provider: one revision,
 * no scripts, no attachments. Anything else means some tool touched it afterwards.
 */
import type { Finding } from "./findings";
import { namesIn } from "./pdf-syntax";

/**
 * Producers and creators of editing tools. A bank's receipt generator is none of these, so a
 * receipt made or saved by one is suspicious (a heuristic: the reviewer sees the name).
 */
export const SUSPICIOUS_PRODUCERS: readonly RegExp[] = [
  /photoshop/i,
  /illustrator/i,
  /gimp/i,
  /inkscape/i,
  /canva/i,
  /pdfescape/i,
  /sejda/i,
  /smallpdf/i,
  /ilovepdf/i,
  /pdf-?xchange/i,
  /phantompdf/i,
  /foxit.*editor/i,
  /nitro/i,
  /pdffiller/i,
  /dochub/i,
  /libreoffice|openoffice/i,
  /microsoft.*word/i,
  /acrobat.*(pro|standard)/i,
];

/**
 * Names that mean active content or attachments wherever they stand: an action's type (`/S
 * /JavaScript`, `/S /Launch`) is the same in the catalog's /OpenAction, a page's /AA and an
 * annotation's /A or /AA. Compared decoded: `/Java#53cript` is /JavaScript.
 */
const ACTIVE_CONTENT: { name: string; finding: Finding }[] = [
  { name: "JavaScript", finding: { code: "javascript", detail: "document contains JavaScript" } },
  { name: "JS", finding: { code: "javascript", detail: "document contains a JavaScript action" } },
  { name: "Launch", finding: { code: "javascript", detail: "document contains a launch action" } },
  { name: "EmbeddedFiles", finding: { code: "embedded_file", detail: "document has embedded files" } },
  { name: "EmbeddedFile", finding: { code: "embedded_file", detail: "document has an embedded file" } },
];

/** How many times the file was saved: one `%%EOF` per revision (an incremental update adds one). */
export function countRevisions(text: string): number {
  return (text.match(/%%EOF/g) ?? []).length;
}

/**
 * Whether the last `startxref` points at a cross-reference table (`xref`) or stream (`N G obj`).
 * Editing a PDF's bytes in place shifts objects; readers silently rebuild the table, so this is
 * the trace such an edit leaves.
 */
export function xrefOffsetValid(text: string): boolean {
  const all = [...text.matchAll(/startxref\s+(\d+)\s+%%EOF/g)];
  const last = all.at(-1);
  if (!last) return false;
  const at = text.slice(Number(last[1]), Number(last[1]) + 32);
  return /^\s*xref\b/.test(at) || /^\s*\d+\s+\d+\s+obj\b/.test(at);
}

/**
 * Findings from the file's objects: more than one revision (or a cross-reference section pointing
 * to a previous one) in the raw bytes; active content and attachments named in any object, those in
 * the bytes and those in `objectStreams` (compressed objects, decoded: pdf-streams.ts). Encrypted
 * object streams stay hidden from this scan; the parsed view (scripts, attachments) covers those.
 */
export function scanPdfBytes(bytes: Uint8Array, objectStreams: readonly string[] = []): Finding[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  const findings: Finding[] = [];
  const revisions = countRevisions(text);
  // A file cut short (a broken download) cannot be read; one whose offsets no longer fit was edited.
  if (revisions === 0) findings.push({ code: "unreadable", detail: "no end-of-file marker: the file is incomplete" });
  if (revisions > 0 && !xrefOffsetValid(text)) findings.push({ code: "edited_in_place", detail: "startxref does not point at a cross-reference section: the file was edited by hand" });
  if (revisions > 1) findings.push({ code: "incremental_update", detail: `${revisions} revisions: the document was changed after it was written` });
  else if (/\/Prev\s+\d+/.test(text)) findings.push({ code: "incremental_update", detail: "cross-reference section points to a previous revision" });
  const names = new Set([text, ...objectStreams].flatMap((objects) => [...namesIn(objects)]));
  for (const { name, finding } of ACTIVE_CONTENT) {
    if (names.has(name) && !findings.some((f) => f.code === finding.code)) findings.push(finding);
  }
  return findings;
}

/** What the PDF parser reports about a document, as far as the review cares. */
export interface ParsedPdf {
  text: string;
  producer?: string;
  creator?: string;
  pages: number;
  /** JavaScript actions of the document, a page or a form field (PDF.js reports no others). */
  hasJavaScript: boolean;
  attachments: number;
  /** The document's compressed objects (its object streams, decoded) as latin1 text. */
  objectStreams: string[];
}

/** Findings from the parsed document: scripts, attachments, and the tool that produced it. */
export function inspectParsedPdf(pdf: ParsedPdf): Finding[] {
  const findings: Finding[] = [];
  if (pdf.hasJavaScript) findings.push({ code: "javascript", detail: "document contains JavaScript" });
  if (pdf.attachments > 0) findings.push({ code: "embedded_file", detail: `${pdf.attachments} attachment(s)` });
  for (const tool of [pdf.producer, pdf.creator]) {
    if (tool && SUSPICIOUS_PRODUCERS.some((p) => p.test(tool))) {
      findings.push({ code: "suspicious_producer", detail: `made with ${tool}` });
      break;
    }
  }
  if (pdf.text.trim() === "") findings.push({ code: "no_text", detail: "no text layer (scanned or flattened)" });
  return findings;
}

/** Findings merged without repeating a code (the first detail stays). */
export function mergeFindings(...lists: Finding[][]): Finding[] {
  const seen = new Set<string>();
  return lists.flat().filter((f) => (seen.has(f.code) ? false : (seen.add(f.code), true)));
}
