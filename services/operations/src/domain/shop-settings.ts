import { AppError, type ErrorDetail, isCurrency, Money } from "@pgw/kit";

/** Shop settings as the admin API may set them; every field optional (PATCH semantics). */
export interface ShopSettingsInput {
  name?: string;
  webhookUrl?: string | null;
  checkoutEnabled?: boolean;
  settlementCurrency?: string;
  overdraftLimit?: string;
  rateLimitRps?: number;
}

export const MAX_NAME_LENGTH = 200;
export const MAX_RATE_LIMIT_RPS = 100_000;

/**
 * Checks shop settings; throws validation_error naming every bad field. Webhook URLs must be HTTPS
 * outside local mode (DESIGN §7); plain HTTP is for a developer's machine. null removes the URL (the
 * admin API's empty string arrives as null); any string must be a URL.
 */
export function validateShopSettings(input: ShopSettingsInput, requireName: boolean, localMode = false): void {
  const details: ErrorDetail[] = [];
  if (input.name !== undefined || requireName) {
    const name = input.name?.trim() ?? "";
    if (!name || name.length > MAX_NAME_LENGTH) details.push({ field: "name", issue: `must be 1-${MAX_NAME_LENGTH} characters` });
  }
  if (input.webhookUrl !== undefined && input.webhookUrl !== null) {
    const allowed = localMode ? ["http:", "https:"] : ["https:"];
    let ok = false;
    try {
      ok = allowed.includes(new URL(input.webhookUrl).protocol);
    } catch {
      ok = false;
    }
    if (!ok) details.push({ field: "webhook_url", issue: localMode ? "must be an http(s) URL" : "must be an https URL" });
  }
  if (input.settlementCurrency !== undefined && !isCurrency(input.settlementCurrency)) {
    details.push({ field: "settlement_currency", issue: "must be RUB or USDT" });
  }
  if (input.overdraftLimit !== undefined && !/^\d{1,18}(\.\d{1,6})?$/.test(input.overdraftLimit)) {
    details.push({ field: "overdraft_limit", issue: "must be a non-negative decimal string with at most 6 places" });
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
