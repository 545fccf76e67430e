
/** Public error codes, the only error vocabulary merchants see (docs/architecture.md, Error codes). */
export const ERROR_HTTP_STATUS = {
  validation_error: 400,
  unauthorized: 401,
  not_found: 404,
  idempotency_conflict: 412,
  invalid_state: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  insufficient_balance: 422,
  rate_limited: 429,
  internal: 500,
  ledger_inconsistent: 500,
  unavailable: 503,
  no_provider_available: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_HTTP_STATUS;

export interface ErrorDetail {
  field: string;
  issue: string;
}

/** The JSON error body of every 4xx/5xx answer. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: ErrorDetail[] };
}

/** A validation_error about one field: message "<field> <issue>", one detail. */
export function fieldError(field: string, issue: string): AppError {
  return new AppError("validation_error", `${field} ${issue}`, [{ field, issue }]);
}

/** A failure with a public code. Internal detail goes in `cause` (logged, never sent). */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function errorBody(code: ErrorCode, message: string, details: ErrorDetail[] = []): ErrorBody {
  return { error: { code, message, details } };
}
