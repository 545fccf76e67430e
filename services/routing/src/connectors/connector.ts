/**
 * The port every provider connector implements (one folder per provider under connectors/).
 * Types here are the domain side of provider calls; each connector maps them to its wire format.
 */
import type { ProviderStatus } from "../domain/allocation";
import type { ProviderCallbackFacts } from "../domain/callback";

/** Where and how to reach one provider (from its `providers` row). */
export interface ProviderEndpoint {
  code: string;
  baseUrl: string;
  callbackSecret: string;
}

export interface Requisites {
  number?: string;
  name?: string;
  bankname?: string;
}

export interface PayinRequest {
  operationId: string;
  method: string;
  /** Decimal string, scale 2. */
  amount: string;
  currency: string;
  clientId: string;
  clientIp?: string;
  callbackUrl: string;
}

export interface PayoutRequest {
  operationId: string;
  method: string;
  amount: string;
  currency: string;
  destination: Requisites;
  callbackUrl: string;
}

/** A provider's acceptance of an operation. */
export interface Placement {
  reference: string;
  /** Pay-in: where the payer sends money. */
  requisites?: Requisites;
  requiresReceipt: boolean;
  expiresAt?: Date;
}

/** Where an operation stands at its provider: finished (with the amount a completion moved), or still open. */
export type ProviderStatusReport = { status: ProviderStatus; amount?: string } | { status: "open" };

/** An operation the provider holds for one of our operation ids. */
export interface FoundPlacement {
  reference: string;
  report: ProviderStatusReport;
}

export interface FundsState {
  state: "arrived" | "in_progress" | "not_found";
  amount?: string;
}

export interface EvidenceItemFacts {
  id: string;
  amount: string;
  completedAt: string;
  hasFile: boolean;
}

export interface EvidenceLegFacts {
  legId: string;
  amount: string;
  completedAt: string;
  legacy: boolean;
  items: EvidenceItemFacts[];
}

export interface EvidenceFile {
  content: Uint8Array;
  contentType: string;
}

/** Why a provider call failed. */
export type ProviderFailure =
  /** The provider answered and refused (4xx). */
  | "refused"
  /** The provider answered that it cannot serve this now (5xx, e.g. evidence not available). */
  | "unavailable"
  /** No answer within the timeout. */
  | "timeout"
  /** The provider does not know the thing asked for (404). */
  | "not_found"
  /** No connection could be made (refused, no such host): the request never reached the provider. */
  | "unreachable"
  /** Network error once connected, or an answer we cannot read. */
  | "failed";

/** How a provider call ended: its failure, or `failed` for an error that is not the provider's answer. */
export const failureOf = (err: unknown): ProviderFailure => (err instanceof ProviderError ? err.failure : "failed");

export class ProviderError extends Error {
  constructor(
    readonly failure: ProviderFailure,
    message: string,
    readonly httpStatus?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Why a callback was not accepted. */
export class CallbackRejected extends Error {
  constructor(
    readonly reason: "signature" | "malformed",
    message: string,
  ) {
    super(message);
  }
}

/** Headers of an incoming callback, lower-case names (Node's IncomingHttpHeaders fits). */
export type CallbackHeaders = Record<string, string | string[] | undefined>;

/** One provider's API. Every call takes an AbortSignal carrying its timeout. */
export interface ProviderConnector {
  createPayin(p: ProviderEndpoint, req: PayinRequest, signal: AbortSignal): Promise<Placement>;
  createPayout(p: ProviderEndpoint, req: PayoutRequest, signal: AbortSignal): Promise<Placement>;
  cancel(p: ProviderEndpoint, reference: string, signal: AbortSignal): Promise<void>;
  /** What the provider placed for our operation id, or null when it holds nothing for it. */
  placedFor(p: ProviderEndpoint, operationId: string, signal: AbortSignal): Promise<FoundPlacement | null>;
  checkFunds(p: ProviderEndpoint, reference: string, signal: AbortSignal): Promise<FundsState>;
  /** The operation's status, asked when its callback is overdue. */
  status(p: ProviderEndpoint, reference: string, signal: AbortSignal): Promise<ProviderStatusReport>;
  getEvidence(p: ProviderEndpoint, reference: string, signal: AbortSignal): Promise<EvidenceLegFacts[]>;
  getEvidenceFile(p: ProviderEndpoint, itemId: string, signal: AbortSignal): Promise<EvidenceFile>;
  /** Verifies the signature of a callback's raw body and parses it; throws CallbackRejected. */
  parseCallback(p: ProviderEndpoint, rawBody: Buffer, headers: CallbackHeaders): ProviderCallbackFacts;
}
