/**
 * Receipt evidence of a completed operation (docs/api.md, Receipts and receipt_evidence_status), pure.
 *
 * Each positive provider leg becomes receipt items:
 * - a leg whose provider items add up exactly to the leg's amount is decomposed into those items
 *   (each with a file when the provider has one);
 * - a legacy leg, and a leg whose items do not add up to its amount (or that has none), becomes
 *   one synthetic item with the leg's authoritative amount and no file. A mismatch means the
 *   provider's decomposition cannot be trusted; the leg's own amount is the physical fact, so the
 *   items always add up to the legs and the mismatch is reported (alert) instead of shown.
 *
 * Status: `partial` when any item is synthetic, else `complete`. Legs of zero or negative amount
 * carry no money and are left out. When the provider reports no positive leg at all (an operation
 * completed by an admin's decision, a provider without evidence), or legs that do not add up to the
 * operation's captured amount (an admin approved another amount than the provider's legs show, or
 * the provider's completion and its legs disagree), the captured amount, the operation's physical
 * fact, is the one leg: one synthetic item, `partial`, and disagreeing legs are reported.
 *
 * Receipts materialises and stores evidence by these rules; the notifier builds a completion's
 * webhook by the same ones when the status event carries the provider's legs, so both show the
 * same items.
 */
import type { OperationStatusChanged } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import { createHash } from "node:crypto";
import { formatExact, Money } from "./money";
import type { Evidence } from "./operation-json";
import { receiptLink } from "./receipt-link";

/** A provider leg as routing reports it, its amounts and times parsed. */
export interface LegFacts {
  legId: string;
  amount: Money;
  completedAt: Date;
  legacy: boolean;
  items: { id: string; amount: Money; completedAt: Date; hasFile: boolean }[];
}

/** One completed physical contribution, ready to store. */
export interface EvidenceItemDraft {
  /** Stable per (operation, leg, provider item): materialising twice yields the same ids. */
  id: string;
  legId: string;
  amount: Money;
  completedAt: Date;
  legacy: boolean;
  providerItemId: string | null;
  hasFile: boolean;
}

export type MaterialisedStatus = "complete" | "partial";

/** The materialised evidence and the legs whose decomposition was rejected. */
export interface Materialised {
  status: MaterialisedStatus;
  items: EvidenceItemDraft[];
  mismatches: { legId: string; legAmount: string; itemsSum: string }[];
}

/** Namespace of receipt item ids (a random UUID fixed here: ids from other name spaces never collide). */
const ITEM_ID_NAMESPACE = Buffer.from("6f1b3c2e8d4a4f5b9c7e2a1d0b3f4e5c", "hex");

/**
 * A name-based UUID (RFC 9562 version 5: SHA-1 of a namespace and the name) derived from `parts`,
 * so that a public item id never reveals the provider's id and two materialisations agree. Version
 * 5, not 8: validators that know only versions 1 to 5 accept it.
 */
export function stableUuid(...parts: string[]): string {
  const h = createHash("sha1").update(ITEM_ID_NAMESPACE).update(parts.join("\u0000")).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Items in the public order: completed_at, then id. */
export function orderItems<T extends { completedAt: Date; id: string }>(items: T[]): T[] {
  return [...items].sort((a, b) => a.completedAt.getTime() - b.completedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The leg id of the one synthetic leg that stands for the whole operation. */
const OPERATION_LEG = "operation";

/** Applies the rules above to an operation's legs; `captured` is the operation's own fact (zero: not known). */
export function materialiseEvidence(operationId: string, legs: LegFacts[], captured: { amount: Money; completedAt: Date }): Materialised {
  const items: EvidenceItemDraft[] = [];
  const mismatches: Materialised["mismatches"] = [];
  let synthetic = false;
  let positive = legs.filter((l) => l.amount.gt(0));
  const legsTotal = positive.reduce((acc, l) => acc.plus(l.amount), new Money(0));
  if (captured.amount.gt(0) && !legsTotal.eq(captured.amount)) {
    if (positive.length > 0) mismatches.push({ legId: OPERATION_LEG, legAmount: captured.amount.toFixed(), itemsSum: legsTotal.toFixed() });
    positive = [{ legId: OPERATION_LEG, ...captured, legacy: true, items: [] }];
  }
  for (const leg of positive) {
    const sum = leg.items.reduce((acc, i) => acc.plus(i.amount), new Money(0));
    if (!leg.legacy && leg.items.length > 0 && sum.eq(leg.amount)) {
      for (const i of leg.items) {
        items.push({ id: stableUuid(operationId, leg.legId, i.id), legId: leg.legId, amount: i.amount, completedAt: i.completedAt, legacy: false, providerItemId: i.id, hasFile: i.hasFile });
      }
      continue;
    }
    if (!leg.legacy) mismatches.push({ legId: leg.legId, legAmount: leg.amount.toFixed(), itemsSum: sum.toFixed() });
    synthetic = true;
    items.push({ id: stableUuid(operationId, leg.legId), legId: leg.legId, amount: leg.amount, completedAt: leg.completedAt, legacy: true, providerItemId: null, hasFile: false });
  }
  return { status: synthetic ? "partial" : "complete", items: orderItems(items), mismatches };
}

/** A provider leg on the wire (routing's `ProviderLeg`): decimal strings and ISO timestamps. */
export interface WireLeg {
  legId: string;
  amount: string;
  completedAt: string;
  legacy: boolean;
  items: readonly { id: string; amount: string; completedAt: string; hasFile: boolean }[];
}

/** Wire → rules: routing's legs with their amounts and times parsed. */
export function legFactsOf(legs: readonly WireLeg[]): LegFacts[] {
  return legs.map((l) => ({
    legId: l.legId,
    amount: new Money(l.amount),
    completedAt: new Date(l.completedAt),
    legacy: l.legacy,
    items: l.items.map((i) => ({ id: i.id, amount: new Money(i.amount), completedAt: new Date(i.completedAt), hasFile: i.hasFile })),
  }));
}

/**
 * A completed operation's own fact, the leg its evidence shows when the provider reports none: its
 * captured amount, completed at its last change (`otherwise` when the snapshot has no time).
 */
export function capturedOf(op: { actualAmount: string; updatedAt: string }, otherwise: string | Date): { amount: Money; completedAt: Date } {
  return { amount: new Money(op.actualAmount || "0"), completedAt: new Date(op.updatedAt || otherwise) };
}

/**
 * The evidence of the completion `ev` announces for `operationId`, made from the provider's legs
 * the event carries (a completion the provider reported, its legs had with its callback). Null when
 * it carries none (unknown): the legs must then be asked of routing.
 */
export function evidenceOfCompletion(operationId: string, ev: OperationStatusChanged): Materialised | null {
  if (ev.status !== "completed" || !ev.operation || !ev.providerEvidence) return null;
  return materialiseEvidence(operationId, legFactsOf(ev.providerEvidence.legs), capturedOf(ev.operation, ev.occurredAt));
}

/**
 * Evidence as receipts answers it and get_operation_state shows it: each item's amount written
 * exactly, and a link valid 15 minutes from `now` for an item with a file.
 */
export function presentEvidence(
  status: string,
  items: readonly { id: string; amount: Money; completedAt: Date; hasFile: boolean }[],
  links: { baseUrl: string; secret: string },
  now: Date,
): Evidence {
  return {
    status,
    items: items.map((i) => ({
      id: i.id,
      amount: formatExact(i.amount),
      completedAt: i.completedAt.toISOString(),
      receiptUrl: i.hasFile ? receiptLink(links.baseUrl, links.secret, i.id, now) : undefined,
    })),
  };
}
