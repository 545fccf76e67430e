import { AppError, CREATE_REQUEST_FIELDS, isCurrency, NOT_A_STRING, parseCreateAmount, REQUEST_AMOUNT_MAX_DIGITS, type ErrorDetail } from "@pgw/contracts";
import { createHash } from "node:crypto";
import { isIP } from "node:net";
import { findBank } from "./banks";
import { normalizeCardNumber, normalizePhone } from "./destination";
import { isMethod, METHODS, type Method } from "./methods";

export type OperationType = "payment" | "payout";

/** A create request as the merchant sent it (strings already type-checked by the gateway). */
export interface CreateInput {
  type: OperationType;
  merchantOperationId: string;
  clientId: string;
  clientIp?: string;
  method: string;
  amount: string;
  currency: string;
  number?: string;
  name?: string;
  bankname?: string;
  /** Fields the caller received with a JSON type other than string (their values above are unset). */
  wronglyTyped?: readonly string[];
}

/** The create fields, typed for lookups by any string. */
const CREATE_FIELDS: readonly string[] = CREATE_REQUEST_FIELDS;

/** Where a payout's money goes, normalised. */
export interface Destination {
  number: string;
  name: string;
  bankname?: string;
}

/** A valid create command. */
export interface CreateCommand {
  type: OperationType;
  merchantOperationId: string;
  clientId: string;
  clientIp?: string;
  method: Method;
  /** As sent, which the rules hold to scale 2, e.g. "100.50". */
  amount: string;
  currency: string;
  /** Payouts only. */
  destination?: Destination;
}

/** A payout recipient without a name is recorded under this one. */
export const ANONYMOUS_RECIPIENT = "аноним";
const MAX_NAME_LENGTH = 256;

function payoutDestination(method: Method, input: CreateInput, details: ErrorDetail[]): Destination | undefined {
  // Cut by code point: a cut inside a surrogate pair would leave a lone surrogate (stored as U+FFFD).
  const name = input.name?.trim() ? Array.from(input.name.trim()).slice(0, MAX_NAME_LENGTH).join("") : ANONYMOUS_RECIPIENT;
  if (METHODS[method].destination === "card") {
    const number = input.number ? normalizeCardNumber(input.number) : null;
    if (!number) details.push({ field: "number", issue: input.number ? "must be a valid card number (16-19 digits, Luhn)" : "is required for WT_RUB_C2C payouts" });
    return number ? { number, name } : undefined;
  }
  const number = input.number ? normalizePhone(input.number) : null;
  if (!number) details.push({ field: "number", issue: input.number ? "must be a phone number (E.164 or 11-digit RU)" : "is required for WT_RUB_PHONE payouts" });
  const bank = input.bankname ? findBank(METHODS[method].destinationCurrency, input.bankname) : undefined;
  if (!bank) details.push({ field: "bankname", issue: input.bankname ? "is not a bank code of the RUB bank dictionary" : "is required for WT_RUB_PHONE payouts" });
  return number && bank ? { number, name, bankname: bank.code } : undefined;
}

/** Why `raw`, which parseCreateAmount refused, is not a create amount. */
function amountIssue(raw: string): string {
  if (!raw) return "is required";
  // Well formed and positive, so refused for its size.
  if (/^[1-9]\d*\.\d{2}$/.test(raw)) return `must have at most ${REQUEST_AMOUNT_MAX_DIGITS} digits before the decimal point`;
  return "must be a positive decimal string with exactly 2 decimal places, e.g. 100.50";
}

/**
 * Checks a create request against every rule of docs/api.md and docs/architecture.md, Validation;
 * throws naming each bad field.
 */
export function validateCreate(input: CreateInput): CreateCommand {
  const details: ErrorDetail[] = [];
  // Any non-empty string (docs/api.md, Idempotency), of any length the body allows: the key is
  // indexed by its hash.
  const required = (field: string, value: string | undefined) => {
    if (!value) details.push({ field, issue: "is required" });
  };
  required("merchant_operation_id", input.merchantOperationId);
  required("client_id", input.clientId);
  // Optional: an empty string is no address, as if the field were absent.
  const clientIp = input.clientIp || undefined;
  if (clientIp !== undefined && !isIP(clientIp)) details.push({ field: "client_ip", issue: "must be an IPv4 or IPv6 address" });
  if (!isMethod(input.method)) details.push({ field: "method", issue: input.method ? "is not a supported method (WT_RUB_C2C, WT_RUB_PHONE)" : "is required" });
  if (!parseCreateAmount(input.amount)) details.push({ field: "amount", issue: amountIssue(input.amount) });
  if (!isCurrency(input.currency)) details.push({ field: "currency", issue: input.currency ? "is not a supported currency (RUB, USDT)" : "is required" });
  const destination = input.type === "payout" && isMethod(input.method) ? payoutDestination(input.method, input, details) : undefined;
  // A wrongly typed field is named for its type alone (its value never arrived); the rest as found.
  const wronglyTyped = new Set((input.wronglyTyped ?? []).filter((field) => CREATE_FIELDS.includes(field)));
  const all = [...[...wronglyTyped].map((field) => ({ field, issue: NOT_A_STRING })), ...details.filter((d) => !wronglyTyped.has(d.field))];
  all.sort((a, b) => CREATE_FIELDS.indexOf(a.field) - CREATE_FIELDS.indexOf(b.field));
  if (all.length > 0) throw new AppError("validation_error", "request validation failed", all);
  return {
    type: input.type,
    merchantOperationId: input.merchantOperationId,
    clientId: input.clientId,
    clientIp,
    method: input.method as Method,
    amount: input.amount,
    currency: input.currency,
    destination,
  };
}

/**
 * Canonical hash of a create request for idempotency: the fields that define it; unknown fields
 * never reach here, so they do not count. The amount is hashed as sent: the rules accept one
 * spelling per value (exactly 2 places), the one earlier normalising hashes used too.
 */
export function requestHash(input: CreateInput): string {
  const canonical = [
    input.type,
    input.merchantOperationId,
    input.clientId,
    input.clientIp || null,
    input.method,
    input.amount,
    input.currency,
    input.number ?? null,
    input.name ?? null,
    input.bankname ?? null,
  ];
  return createHash("sha256").update(JSON.stringify(canonical)).digest("hex");
}
