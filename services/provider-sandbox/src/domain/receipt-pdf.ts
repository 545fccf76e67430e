import { createHash } from "node:crypto";
import { PDFDocument, StandardFonts } from "pdf-lib";

/** What a receipt PDF states (ASCII only: the standard PDF fonts have no Cyrillic). */
export interface ReceiptFacts {
  /** e.g. `1500.00 RUB` */
  amount: string;
  /** Card number or phone the money went to. */
  recipient: string;
  itemId: string;
  completedAt: Date;
}

/**
 * The bank's transaction number printed on a receipt: 16 digits derived from the evidence item.
 * The gateway serves this file to merchants as it is, and a provider's own identifiers (its operation
 * reference, its item ids) never reach them (docs/api.md, The operation object).
 */
export function transactionNumber(itemId: string): string {
  const digest = createHash("sha256").update(itemId).digest();
  return (digest.readBigUInt64BE(0) % 10n ** 16n).toString().padStart(16, "0");
}

/** The text lines of a receipt, in order. */
export function receiptLines(facts: ReceiptFacts): string[] {
  return [
    "Payment receipt",
    `Amount: ${facts.amount}`,
    `Recipient: ${facts.recipient}`,
    `Transaction: ${transactionNumber(facts.itemId)}`,
    `Completed: ${facts.completedAt.toISOString()}`,
  ];
}

/** Renders a small one-page receipt PDF (a classic cross-reference table, no object streams). */
export async function renderReceipt(facts: ReceiptFacts): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.setTitle("Payment receipt");
  doc.setProducer("Test bank receipts 1.0");
  doc.setCreationDate(facts.completedAt);
  doc.setModificationDate(facts.completedAt);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([420, 240]);
  page.setFont(font);
  receiptLines(facts).forEach((line, i) => page.drawText(line, { x: 24, y: 200 - i * 24, size: i === 0 ? 16 : 11 }));
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}
