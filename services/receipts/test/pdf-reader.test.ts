/**
 * The PDF reader's limits with real parses: a document decoding to more than its limit is not
 * parsed, a parse cannot take more memory than its limit, and the parse queue is fair between shops.
 */
import { createPdfReader, PdfParseError } from "../src/connectors/pdf-reader";
import { PdfDecodeLimitError } from "../src/connectors/pdf-streams";
import { sampleMemory } from "./memory";
import { bombReceiptPdf, encryptedBombPdf, READER_LIMITS, receiptPdf } from "./receipt-pdfs";

const facts = { amount: "1500.00 RUB", recipient: "4111111111111111" };
const GiB = 1024 ** 3;

it("refuses a decompression bomb before any parser reads it", async () => {
  const reader = createPdfReader(READER_LIMITS);
  const bomb = await bombReceiptPdf(facts, GiB); // 1 MB inflating to 1 GiB
  const memory = sampleMemory();
  await expect(reader.read(bomb, "shop")).rejects.toThrow(new PdfDecodeLimitError("its streams decode to more than 32 MiB"));
  const peaks = memory.stop();
  expect(peaks.descendantMb).toBe(0); // no parsing process started
});

it("kills a parse past its memory limit: two bombs PDF.js inflates end as parse errors, neither parser nor this process grows", async () => {
  const reader = createPdfReader({ ...READER_LIMITS, timeoutMs: 30_000, maxRssMb: 160 });
  // 1 MB that inflates to 1 GiB, encrypted: only a parser that decrypts it sees the bomb.
  const bomb = encryptedBombPdf(GiB);
  const before = process.memoryUsage().rss / 2 ** 20;
  const memory = sampleMemory();
  const results = await Promise.allSettled([reader.read(bomb, "shop a"), reader.read(bomb, "shop b")]);
  const peaks = memory.stop();
  for (const result of results) {
    expect(result.status).toBe("rejected");
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(PdfParseError);
    expect((result as PromiseRejectedResult).reason.message).toBe("the parser went over its memory limit of 160 MiB");
  }
  expect(peaks.descendantMb).toBeGreaterThan(100); // each did inflate: it reached the limit
  expect(peaks.descendantMb).toBeLessThan(160 + 32); // the watchdog reads every 10 ms
  expect(peaks.selfMb - before).toBeLessThan(64);
});

it("parses another shop's upload after the one running, not behind a slow shop's queue", async () => {
  const reader = createPdfReader({ ...READER_LIMITS, maxConcurrent: 1 });
  const pdf = await receiptPdf(facts);
  const finished: string[] = [];
  const read = (shopId: string, name: string) => reader.read(pdf, shopId).then(() => finished.push(name));
  await Promise.all([read("slow shop", "a1"), read("slow shop", "a2"), read("slow shop", "a3"), read("other shop", "b1")]);
  expect(finished).toEqual(["a1", "b1", "a2", "a3"]);
});
