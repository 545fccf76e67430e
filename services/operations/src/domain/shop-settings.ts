import { AppError, checkWebhookUrl, CURRENCY_SCALE, DestinationRefused, type ErrorDetail, isCurrency, Money } from "@pgw/contracts";

/** Shop settings as the admin API may set them; every field optional (PATCH semantics). */
export interface ShopSettingsInput {
  name?: string;
  webhookUrl?: string | null;
  checkoutEnabled?: boolean;
  settlementCurrency?: string;
  overdraftLimit?: string;
  rateLimitRps?: number;
}

/** A new shop's settlement currency when none is given (the column's default). */
export const DEFAULT_SETTLEMENT_CURRENCY = "RUB";
export const MAX_NAME_LENGTH = 200;
export const MAX_RATE_LIMIT_RPS = 100_000;

/** What a PATCH changes: the shop's settlement currency and overdraft limit as stored. */
export interface CurrentShopSettings {
  settlementCurrency: string;
  overdraftLimit: InstanceType<typeof Money>;
}

/**
 * Checks shop settings; throws validation_error naming every bad field. A webhook URL must pass the
 * notifier's destination policy (kit webhook-destination: HTTPS outside local mode,
 * docs/architecture.md, Webhook URL; no user:password@; no IP literal of a private, loopback or
 * reserved range outside local mode). null removes the URL (the admin API's empty string arrives as
 * null); any string must be a URL.
 *
 * The overdraft limit is an amount in the settlement currency (the one it will have after this
 * change), so it has at most that currency's places: stored and enforced as given, never rounded.
 * For the same reason a change of settlement currency must restate a non-zero limit: 1000 RUB
 * silently becoming 1000 USDT would grant about a hundred times the credit.
 */
export function validateShopSettings(input: ShopSettingsInput, requireName: boolean, localMode = false, current?: CurrentShopSettings): void {
  const details: ErrorDetail[] = [];
  if (input.name !== undefined || requireName) {
    const name = input.name?.trim() ?? "";
    if (!name || name.length > MAX_NAME_LENGTH) details.push({ field: "name", issue: `must be 1-${MAX_NAME_LENGTH} characters` });
  }
  if (input.webhookUrl !== undefined && input.webhookUrl !== null) {
    // The notifier's own policy, so a URL it would refuse at every delivery is refused here first.
    try {
      checkWebhookUrl(input.webhookUrl, localMode);
    } catch (err) {
      if (!(err instanceof DestinationRefused)) throw err;
      details.push({ field: "webhook_url", issue: err.message });
    }
  }
  if (input.settlementCurrency !== undefined && !isCurrency(input.settlementCurrency)) {
    details.push({ field: "settlement_currency", issue: "must be RUB or USDT" });
  }
  const currency = input.settlementCurrency ?? current?.settlementCurrency ?? DEFAULT_SETTLEMENT_CURRENCY;
  if (input.overdraftLimit !== undefined) {
    // With an unknown currency (reported above) the limit is still checked, at the largest scale.
    const places = isCurrency(currency) ? CURRENCY_SCALE[currency] : Math.max(...Object.values(CURRENCY_SCALE));
    if (!new RegExp(`^\\d{1,18}(\\.\\d{1,${places}})?$`).test(input.overdraftLimit)) {
      details.push({ field: "overdraft_limit", issue: `must be a non-negative decimal string with at most ${places} places (the scale of the settlement currency)` });
    }
  }
  const currencyChanges = current !== undefined && input.settlementCurrency !== undefined && input.settlementCurrency !== current.settlementCurrency;
  if (currencyChanges && input.overdraftLimit === undefined && !current.overdraftLimit.isZero()) {
    details.push({ field: "overdraft_limit", issue: `must be given again when settlement_currency changes: the current limit ${current.overdraftLimit.toFixed()} is in ${current.settlementCurrency}` });
  }
  if (input.rateLimitRps !== undefined && (!Number.isInteger(input.rateLimitRps) || input.rateLimitRps < 1 || input.rateLimitRps > MAX_RATE_LIMIT_RPS)) {
    details.push({ field: "rate_limit_rps", issue: `must be an integer from 1 to ${MAX_RATE_LIMIT_RPS}` });
  }
  if (details.length) throw new AppError("validation_error", "invalid shop settings", details);
}

/** Normalised overdraft limit (a Decimal), for storage. */
export function overdraftLimitOf(input: ShopSettingsInput): InstanceType<typeof Money> | undefined {
  return input.overdraftLimit === undefined ? undefined : new Money(input.overdraftLimit);
}
