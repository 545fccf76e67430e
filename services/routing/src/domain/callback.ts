/** Callback → update mapping: what a verified provider callback becomes on the event bus. */
import { capturedAmount, formatRequestAmount } from "@pgw/kit";
import type { ProviderStatus } from "./allocation";

/** A provider callback once the connector has verified and parsed it. */
export interface ProviderCallbackFacts {
  callbackId: string;
  reference: string;
  operationId: string;
  status: ProviderStatus;
  /** Decimal string as the provider reported it. */
  amount?: string;
  occurredAt: Date;
}

/** The domain side of a `ProviderUpdate` event. */
export interface ProviderUpdateFacts {
  operationId: string;
  status: ProviderStatus;
  actualAmount?: string;
  occurredAt: string;
}

/** Whether a provider amount is a non-negative decimal string. */
export function isAmount(value: string): boolean {
  return /^\d{1,18}(\.\d{1,18})?$/.test(value);
}

/**
 * The update operations applies for a callback: the actual amount rounded half-even to 2 places,
 * the scale of an operation's amounts in every currency (the request's; USDT's 6 places are for
 * ledger figures), and the provider's timestamp.
 */
export function providerUpdateOf(cb: ProviderCallbackFacts): ProviderUpdateFacts {
  const actualAmount = cb.amount === undefined ? undefined : formatRequestAmount(cb.amount);
  return { operationId: cb.operationId, status: cb.status, actualAmount, occurredAt: cb.occurredAt.toISOString() };
}

/**
 * Why operations could never apply a callback, or undefined. A completion must capture a positive
 * amount at that scale: accepted, "0.00" or "0.004" would be retried by operations forever while
 * the provider and routing take the operation for completed. Refused, the provider learns it.
 */
export function unusableCallback(cb: ProviderCallbackFacts): string | undefined {
  if (cb.status === "completed" && cb.amount !== undefined && capturedAmount(cb.amount) === null) {
    return "a completion must report a positive amount (2 decimal places)";
  }
  return undefined;
}
