/**
 * The PDF reader's limits with real parses: the parse queue is fair between shops.
 */
import { createPdfReader } from "../src/connectors/pdf-reader";
import { receiptPdf } from "./receipt-pdfs";

const facts = { amount: "1500.00 RUB", recipient: "4111111111111111" };

it("parses another shop's upload after the one running, not behind a slow shop's queue", async () => {
  const reader = createPdfReader({ timeoutMs: 15_000, maxConcurrent: 1 });
  const pdf = await receiptPdf(facts);
  const finished: string[] = [];
  const read = (shopId: string, name: string) => reader.read(pdf, shopId).then(() => finished.push(name));
  await Promise.all([read("slow shop", "a1"), read("slow shop", "a2"), read("slow shop", "a3"), read("other shop", "b1")]);
  expect(finished).toEqual(["a1", "b1", "a2", "a3"]);
});
