/**
 * Sandbox wire format ↔ connector types. Requests are built here; answers are validated here, so
 * nothing the provider sends reaches the rest of the unit unchecked.
 */
import { isUuid } from "@pgw/contracts";
import { z } from "zod";
import { isProviderStatus } from "../../domain/allocation";
import { isAmount, type ProviderCallbackFacts } from "../../domain/callback";
import type { EvidenceLegFacts, FoundPlacement, FundsState, PayinRequest, PayoutRequest, Placement, ProviderStatusReport, Requisites } from "../connector";

export const payinBody = (r: PayinRequest) => ({
  operation_id: r.operationId,
  method: r.method,
  amount: r.amount,
  currency: r.currency,
  client_id: r.clientId,
  callback_url: r.callbackUrl,
});

export const payoutBody = (r: PayoutRequest) => ({
  operation_id: r.operationId,
  method: r.method,
  amount: r.amount,
  currency: r.currency,
  destination: { number: r.destination.number ?? "", name: r.destination.name ?? "", ...(r.destination.bankname ? { bankname: r.destination.bankname } : {}) },
  callback_url: r.callbackUrl,
});

const optionalText = z
  .string()
  .nullish()
  .transform((v) => (v ? v : undefined));

const timestamp = z.string().refine((v) => !Number.isNaN(Date.parse(v)), "must be a timestamp");

/** An amount as the sandbox writes it: a decimal string (a JSON number is accepted and read as text). */
const amount = z
  .union([z.string(), z.number()])
  .transform((v) => String(v))
  .refine(isAmount, "must be a non-negative decimal");

const createdAnswer = z.object({
  reference: z.string().min(1),
  status: z.string(),
  requisites: z.object({ number: optionalText, name: optionalText, bankname: optionalText }).nullish(),
  requires_receipt: z.boolean().nullish(),
  expires_at: timestamp.nullish(),
});

/** The sandbox's answer to a pay-in or payout create. */
export function placementOf(json: unknown): Placement {
  const a = createdAnswer.parse(json);
  const requisites: Requisites | undefined = a.requisites ? { number: a.requisites.number, name: a.requisites.name, bankname: a.requisites.bankname } : undefined;
  return {
    reference: a.reference,
    requisites,
    requiresReceipt: a.requires_receipt ?? false,
    expiresAt: a.expires_at ? new Date(a.expires_at) : undefined,
  };
}

const operationAnswer = z.object({
  status: z.string(),
  amount,
  paid_amount: amount.nullish(),
});

/**
 * The sandbox's operation status as a report: paid (pay-in) and settled (payout) are completions
 * of what was paid (its `paid_amount`; never the requested `amount`, which is not a fact); created is still open, and so is cancelled, which only our own release does
 * (the allocation is no longer active then).
 */
export function statusReportOf(json: unknown): ProviderStatusReport {
  const a = operationAnswer.parse(json);
  switch (a.status) {
    case "paid":
    case "settled":
      return { status: "completed", amount: a.paid_amount ?? undefined };
    case "declined":
    case "expired":
      return { status: a.status };
    default:
      return { status: "open" };
  }
}

/** A placement found by operation id: its reference and where it stands. */
export function foundPlacementOf(json: unknown): FoundPlacement {
  return { reference: z.object({ reference: z.string().min(1) }).parse(json).reference, report: statusReportOf(json) };
}

const fundsAnswer = z.object({ state: z.enum(["arrived", "in_progress", "not_found"]), amount: amount.nullish() });

export function fundsOf(json: unknown): FundsState {
  const a = fundsAnswer.parse(json);
  return { state: a.state, amount: a.amount ?? undefined };
}

const evidenceAnswer = z.object({
  legs: z.array(
    z.object({
      leg_id: z.string().min(1),
      amount,
      completed_at: timestamp,
      legacy: z.boolean().default(false),
      items: z
        .array(z.object({ id: z.string().min(1), amount, completed_at: timestamp, has_file: z.boolean().default(false) }))
        .default([]),
    }),
  ),
});

export function evidenceOf(json: unknown): EvidenceLegFacts[] {
  return evidenceAnswer.parse(json).legs.map((l) => ({
    legId: l.leg_id,
    amount: l.amount,
    completedAt: l.completed_at,
    legacy: l.legacy,
    items: l.items.map((i) => ({ id: i.id, amount: i.amount, completedAt: i.completed_at, hasFile: i.has_file })),
  }));
}

const callbackBody = z.object({
  callback_id: z.union([z.string().min(1), z.number()]).transform(String),
  reference: z.string().min(1),
  operation_id: z.string().refine(isUuid),
  status: z.string().refine(isProviderStatus, "unknown status"),
  amount: amount.nullish(),
  occurred_at: timestamp,
});

/** A callback body (signature already verified). */
export function callbackOf(json: unknown): ProviderCallbackFacts {
  const c = callbackBody.parse(json);
  return {
    callbackId: c.callback_id,
    reference: c.reference,
    operationId: c.operation_id.toLowerCase(),
    status: c.status as ProviderCallbackFacts["status"],
    amount: c.amount ?? undefined,
    occurredAt: new Date(c.occurred_at),
  };
}
