import { create } from "@bufbuild/protobuf";
import { isValidReceiptLink, receiptLink, type Evidence } from "@pgw/contracts";
import { createLogger } from "@pgw/kit/runtime";
import { OperationSchema } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { GatewayClients } from "./clients";
import { ReceiptEvidence } from "./receipt-evidence";

const SECRET = "link-secret";
const BASE = "https://pay.example.com";
const ITEM = "0d5a3a8e-6b0f-4a53-8a52-3c1f4c9e2b11";
const LEGACY_ITEM = "7c1e2f4a-9b3d-4e5f-8a6b-1c2d3e4f5a6b";
const t0 = new Date("2026-03-01T12:00:00Z");

const completed = (operationId: string) => create(OperationSchema, { operationId, status: "completed", actualAmount: "1500.00" });

/** A receipts stand-in answering `answers` in turn (an Error is thrown), counting its calls. */
function receiptsAnswering(...answers: (Evidence | Error)[]) {
  const receipts = {
    calls: 0,
    getEvidence: async () => {
      const answer = answers[Math.min(receipts.calls++, answers.length - 1)];
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  return receipts;
}

function setUp(receipts: ReturnType<typeof receiptsAnswering>, options: { linkSecret?: string; maxEntries?: number } = {}) {
  let now = t0;
  const evidence = new ReceiptEvidence(
    { receipts: receipts as unknown as GatewayClients["receipts"], linkSecret: options.linkSecret ?? SECRET, log: createLogger("test", "silent") },
    options.maxEntries,
    () => now,
  );
  return { evidence, advance: (ms: number) => (now = new Date(now.getTime() + ms)), now: () => now };
}

const stored = (status: string, at = t0): Evidence => ({
  status,
  items: [
    { id: LEGACY_ITEM, amount: "500.00", completedAt: "2026-03-01T11:00:00.000Z" },
    { id: ITEM, amount: "1000.00", completedAt: "2026-03-01T11:00:00.000Z", receiptUrl: receiptLink(BASE, SECRET, ITEM, at) },
  ],
});

describe("receipt evidence kept by the gateway", () => {
  it("asks receipts once for stored evidence and renews its links on every later read", async () => {
    const receipts = receiptsAnswering(stored("partial"));
    const { evidence, advance, now } = setUp(receipts);
    const op = completed("11111111-1111-4111-8111-111111111111");
    expect(await evidence.of(op)).toEqual(stored("partial"));
    advance(20 * 60_000); // the first links have expired by now
    const later = await evidence.of(op);
    expect(receipts.calls).toBe(1);
    expect(later).toEqual(stored("partial", now()));
    expect(isValidReceiptLink(SECRET, ITEM, later!.items[1].receiptUrl!, now())).toBe(true);
  });

  it("gives every read within one second the links the first read of that second signed, and new ones the next second", async () => {
    const receipts = receiptsAnswering(stored("complete"));
    const { evidence, advance, now } = setUp(receipts);
    const op = completed("44444444-4444-4444-8444-444444444444");
    await evidence.of(op);
    advance(60_000);
    const first = await evidence.of(op);
    expect(first).toEqual(stored("complete", now()));
    advance(999); // still the same second: a link signed now would read the same
    expect(await evidence.of(op)).toEqual(stored("complete", now()));
    advance(1);
    const next = await evidence.of(op);
    expect(next).toEqual(stored("complete", now()));
    expect(next!.items[1].receiptUrl).not.toBe(first!.items[1].receiptUrl);
  });

  it("keeps nothing that receipts has not stored, nor a failure, and never asks for an operation that is not completed", async () => {
    const receipts = receiptsAnswering({ status: "unavailable", items: [] }, new Error("receipts down"), { status: "not_ready", items: [] }, stored("complete"));
    const { evidence } = setUp(receipts);
    const op = completed("22222222-2222-4222-8222-222222222222");
    expect(await evidence.of(op)).toEqual({ status: "unavailable", items: [] });
    expect(await evidence.of(op)).toBeNull();
    expect(await evidence.of(op)).toEqual({ status: "not_ready", items: [] });
    expect(await evidence.of(op)).toEqual(stored("complete"));
    expect(await evidence.of(op)).toEqual(stored("complete"));
    expect(receipts.calls).toBe(4);
    expect(await evidence.of(create(OperationSchema, { operationId: op.operationId, status: "pending" }))).toBeNull();
    expect(receipts.calls).toBe(4);
  });

  it("asks receipts every time when its links do not verify under the gateway's secret", async () => {
    const receipts = receiptsAnswering(stored("complete"));
    const { evidence } = setUp(receipts, { linkSecret: "another-secret" });
    const op = completed("33333333-3333-4333-8333-333333333333");
    for (let i = 0; i < 3; i++) expect(await evidence.of(op)).toEqual(stored("complete"));
    expect(receipts.calls).toBe(3);
  });

  it("forgets the least recently read operation beyond its size", async () => {
    const receipts = receiptsAnswering(stored("complete"));
    const { evidence } = setUp(receipts, { maxEntries: 2 });
    const [a, b, c] = ["a", "b", "c"].map((x) => completed(`${x.repeat(8)}-aaaa-4aaa-8aaa-${x.repeat(12)}`));
    await evidence.of(a);
    await evidence.of(b);
    await evidence.of(a); // a is now the most recently read
    await evidence.of(c); // b goes
    expect(receipts.calls).toBe(3);
    await evidence.of(a);
    await evidence.of(c);
    expect(receipts.calls).toBe(3);
    await evidence.of(b);
    expect(receipts.calls).toBe(4);
  });
});
