/** Request checks shared by the RPC handlers; failures are `validation_error` naming the field. */
import { AppError, isCurrency, type Currency } from "@pgw/kit";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function invalid(field: string, issue: string): AppError {
  return new AppError("validation_error", `${field} ${issue}`, [{ field, issue }]);
}

export function requireUuid(value: string, field: string): string {
  if (!UUID.test(value)) throw invalid(field, "must be a UUID");
  return value.toLowerCase();
}

export function requireCurrency(value: string, field: string): Currency {
  if (!isCurrency(value)) throw invalid(field, "must be a supported currency");
  return value;
}

export function requireText(value: string | undefined, field: string): string {
  if (!value || !value.trim()) throw invalid(field, "is required");
  return value;
}
