import { PDFDocument, PDFName, PDFString } from "pdf-lib";
import { createPdfReader, PdfParseError } from "../src/connectors/pdf-reader";
import { countRevisions, scanPdfBytes } from "../src/domain/pdf-structure";
import { READER_LIMITS, receiptPdf, tamperedReceiptPdf } from "./receipt-pdfs";

const reader = createPdfReader(READER_LIMITS);
const facts = { amount: "1500.00 RUB", recipient: "4111111111111111" };

describe("test receipts are what they claim (PDF.js reads them)", () => {
  it("a genuine receipt has one revision, no structural findings and its lines as text", async () => {
    const pdf = await receiptPdf(facts);
    expect(countRevisions(pdf.toString("latin1"))).toBe(1);
    expect(scanPdfBytes(pdf)).toEqual([]);
    const parsed = await reader.read(pdf, "shop");
    expect(parsed.text).toContain("Amount: 1500.00 RUB");
    expect(parsed.text).toContain("Recipient: 4111111111111111");
    expect(parsed).toMatchObject({ pages: 1, hasJavaScript: false, attachments: 0, producer: "pgw provider-sandbox" });
  });

  it("a tampered receipt shows the forged amount and carries two revisions", async () => {
    const pdf = await tamperedReceiptPdf(facts, "15000.00 RUB");
    const parsed = await reader.read(pdf, "shop");
    expect(parsed.text).toContain("Amount: 15000.00 RUB");
    expect(parsed.text).not.toContain("Amount: 1500.00 RUB");
    expect(scanPdfBytes(pdf).map((f) => f.code)).toEqual(["incremental_update"]);
  });

  it("bytes edited in place (offsets shifted) are an edited_in_place finding", async () => {
    const pdf = (await receiptPdf(facts)).toString("latin1");
    const edited = Buffer.from(pdf.replace("/Title", "/Title   "), "latin1");
    expect(scanPdfBytes(edited).map((f) => f.code)).toContain("edited_in_place");
  });

  it("PDF.js reports JavaScript of a page and of a form field, not only the document's", async () => {
    /** The receipt with `script` placed by `place`, as additional actions on `trigger` (/AA), read by PDF.js. */
    const withScript = async (trigger: string, place: (doc: PDFDocument, script: unknown) => void) => {
      const doc = await PDFDocument.load(await receiptPdf(facts));
      place(doc, doc.context.obj({ [trigger]: { S: "JavaScript", JS: PDFString.of("app.alert(1)") } }));
      return reader.read(Buffer.from(await doc.save()), "shop");
    };
    const onPage = await withScript("O", (doc, script) => doc.getPage(0).node.set(PDFName.of("AA"), script as never)); // page opened
    expect(onPage.hasJavaScript).toBe(true);
    const onField = await withScript("U", (doc, script) => { // mouse up
      const field = doc.getForm().createTextField("payer");
      field.addToPage(doc.getPage(0));
      field.acroField.getWidgets()[0].dict.set(PDFName.of("AA"), script as never);
    });
    expect(onField.hasJavaScript).toBe(true);
  });

  it("the reader refuses what is not a PDF, and gives up at its deadline", async () => {
    await expect(reader.read(Buffer.from("%PDF-1.7\nnot really"), "shop")).rejects.toBeInstanceOf(PdfParseError);
    const hasty = createPdfReader({ ...READER_LIMITS, timeoutMs: 1 });
    await expect(hasty.read(await receiptPdf(facts), "shop")).rejects.toThrow(/within 1 ms/);
  });
});
