/** Callback → update mapping: what a verified provider callback becomes on the event bus. */
import { capturedAmount } from "@pgw/contracts";
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
  /** Its place among the operation's updates (1, 2, …), so they are applied in routing's order. */
  sequence: number;
}

/** Whether a provider amount is a non-negative decimal string. */
export function isAmount(value: string): boolean {
  return /^\d{1,18}(\.\d{1,18})?$/.test(value);
}

/**
 * The amount operations books for a provider's report: a completion's, at its currency's scale
 * ("7.125" in USDT is "7.125000"); other statuses carry none (undefined). Null when a completion
 * reports no amount it could book (none at all, not positive, or more places than the currency
 * holds): the report is refused, never replaced by the requested amount nor rounded.
 */
export function bookableAmount(status: ProviderStatus, amount: string | undefined, currency: string): string | null | undefined {
  if (status !== "completed") return undefined;
  return amount === undefined ? null : capturedAmount(amount, currency);
}

/** Why a completion's amount was refused, for the provider. */
export const UNBOOKABLE_COMPLETION = "a completion must report the positive amount that arrived, with at most its currency's decimal places (RUB 2, USDT 6)";
