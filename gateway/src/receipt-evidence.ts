import { isValidReceiptLink, renewReceiptLink, type Evidence } from "@pgw/contracts";
import { type Logger } from "@pgw/kit/runtime";
import type { Operation } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { GatewayClients } from "./clients";

/** The statuses receipts answers only for evidence it has stored, which it never changes afterwards. */
const STORED = new Set(["complete", "partial"]);

/** Evidence kept for an operation, and its links as last renewed (a link's expiry is in whole seconds). */
interface Kept {
  evidence: Evidence;
  renewed?: { second: number; evidence: Evidence };
}

/**
 * Receipt evidence of completed operations, as get_operation_state and confirm_payment show it.
 * Receipts stores an operation's evidence once and never changes it, so the gateway keeps what
 * receipts answered and later reads of the operation need no call to receipts: their links are
 * renewed here, each valid 15 minutes from the read as receipts would issue it. A link's expiry is
 * in whole seconds, so every read within one second gets the very links the first one signed
 * (signing them again would give the same text). Evidence is kept
 * only when each of its links verifies under the gateway's RECEIPT_URL_SECRET, so a gateway whose
 * secret differs from receipts' asks receipts every time instead of handing out refused links.
 * Beyond `maxEntries` the least recently read operation goes first.
 */
export class ReceiptEvidence {
  private readonly kept = new Map<string, Kept>();
  private warnedOfSecret = false;

  constructor(
    private readonly deps: { receipts: GatewayClients["receipts"]; linkSecret: string; log: Logger },
    private readonly maxEntries = 20_000,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The evidence of `op`: null for an operation that is not completed or when receipts cannot answer now. */
  async of(op: Operation): Promise<Evidence | null> {
    if (op.status !== "completed") return null;
    const kept = this.keptFor(op.operationId);
    if (kept) return kept;
    try {
      const evidence = await this.deps.receipts.getEvidence({ operationId: op.operationId, completed: op });
      this.keep(op.operationId, evidence);
      return evidence;
    } catch (err) {
      this.deps.log.warn({ err, operation_id: op.operationId }, "receipt evidence unavailable");
      return null;
    }
  }

  private keptFor(operationId: string): Evidence | undefined {
    const kept = this.kept.get(operationId);
    if (!kept) return undefined;
    this.kept.delete(operationId);
    this.kept.set(operationId, kept); // most recently read last
    const now = this.now();
    const second = Math.floor(now.getTime() / 1000);
    if (kept.renewed?.second !== second) {
      const renew = (i: Evidence["items"][number]) => (i.receiptUrl === undefined ? i : { ...i, receiptUrl: renewReceiptLink(this.deps.linkSecret, i.id, i.receiptUrl, now) });
      kept.renewed = { second, evidence: { status: kept.evidence.status, items: kept.evidence.items.map(renew) } };
    }
    return kept.renewed.evidence;
  }

  private keep(operationId: string, evidence: Evidence): void {
    if (!STORED.has(evidence.status)) return;
    const now = this.now();
    if (!evidence.items.every((i) => i.receiptUrl === undefined || isValidReceiptLink(this.deps.linkSecret, i.id, i.receiptUrl, now))) {
      if (!this.warnedOfSecret) this.deps.log.warn({ operation_id: operationId }, "receipt links do not verify under RECEIPT_URL_SECRET (set it as receipts has it); evidence is read from receipts every time");
      this.warnedOfSecret = true;
      return;
    }
    if (this.kept.size >= this.maxEntries) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(operationId, { evidence: { status: evidence.status, items: evidence.items.map(({ id, amount, completedAt, receiptUrl }) => ({ id, amount, completedAt, receiptUrl })) } });
  }
}
