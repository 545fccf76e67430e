/** Callback → update mapping: what a verified provider callback becomes on the event bus. */
import { formatAmount, isCurrency, Money } from "@pgw/kit";
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
 * The update operations applies for a callback: the actual amount rounded to the operation
 * currency's scale (as reported when the currency is unknown), the provider's timestamp.
 */
export function providerUpdateOf(cb: ProviderCallbackFacts, currency: string | null | undefined): ProviderUpdateFacts {
  let actualAmount: string | undefined;
  if (cb.amount !== undefined) actualAmount = isCurrency(currency) ? formatAmount(cb.amount, currency) : new Money(cb.amount).toFixed();
  return { operationId: cb.operationId, status: cb.status, actualAmount, occurredAt: cb.occurredAt.toISOString() };
}
