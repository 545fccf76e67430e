/** Request checks shared by the RPC handlers; failures are `validation_error` naming the field. */
import { fieldError, isCurrency, type Currency } from "@pgw/contracts";

export function requireCurrency(value: string, field: string): Currency {
  if (!isCurrency(value)) throw fieldError(field, "must be a supported currency");
  return value;
}

export function requireText(value: string | undefined, field: string): string {
  if (!value || !value.trim()) throw fieldError(field, "is required");
  return value;
}
