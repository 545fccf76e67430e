/** Request checks shared by the RPC handlers; failures are `validation_error` naming the field. */
import { AppError, isCurrency, type Currency } from "@pgw/kit";

export function invalid(field: string, issue: string): AppError {
  return new AppError("validation_error", `${field} ${issue}`, [{ field, issue }]);
}

export function requireCurrency(value: string, field: string): Currency {
  if (!isCurrency(value)) throw invalid(field, "must be a supported currency");
  return value;
}

export function requireText(value: string | undefined, field: string): string {
  if (!value || !value.trim()) throw invalid(field, "is required");
  return value;
}
