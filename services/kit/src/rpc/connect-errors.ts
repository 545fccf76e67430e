import { Code, ConnectError } from "@connectrpc/connect";
import { AppError, ERROR_HTTP_STATUS, type ErrorCode } from "@pgw/contracts";
import { ErrorInfoSchema } from "@pgw/proto/gen/pgw/errors/v1/errors_pb";

/** Our public errors on the wire between units: Connect codes and the `pgw.errors.v1.ErrorInfo` detail. */

// gRPC status carrying each public code between services.
const CONNECT_CODE: Record<ErrorCode, Code> = {
  validation_error: Code.InvalidArgument,
  unauthorized: Code.Unauthenticated,
  not_found: Code.NotFound,
  idempotency_conflict: Code.FailedPrecondition,
  invalid_state: Code.FailedPrecondition,
  payload_too_large: Code.InvalidArgument,
  unsupported_media_type: Code.InvalidArgument,
  insufficient_balance: Code.FailedPrecondition,
  rate_limited: Code.ResourceExhausted,
  internal: Code.Internal,
  ledger_inconsistent: Code.DataLoss,
  unavailable: Code.Unavailable,
  no_provider_available: Code.Unavailable,
};

// When a peer answers without our ErrorInfo detail (a bare status), this is what it means publicly.
const PUBLIC_CODE_OF: Partial<Record<Code, ErrorCode>> = {
  [Code.InvalidArgument]: "validation_error",
  [Code.Unauthenticated]: "unauthorized",
  [Code.NotFound]: "not_found",
  [Code.FailedPrecondition]: "invalid_state",
  [Code.ResourceExhausted]: "rate_limited",
  [Code.Unavailable]: "unavailable",
  [Code.DeadlineExceeded]: "unavailable",
  [Code.Canceled]: "unavailable",
  [Code.DataLoss]: "ledger_inconsistent",
};

// A dependency (database, broker) that cannot answer right now: Prisma's connection, pool and
// transaction-timeout codes, Postgres connection-exception / shutdown / lock- and statement-timeout
// SQLSTATEs, socket errors, and the pg pool's connection and transaction timeouts (pg-db.ts).
const TRANSIENT = /\b(P1001|P1002|P1008|P1017|P2024|P2028|08\d{3}|57P0[1-3]|55P03|57014|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE)\b|Connection terminated|connection timeout|Can't reach database|lock timeout|statement timeout|timeout exceeded when trying to connect|no database connection within \d+ ms|transaction exceeded \d+ ms/i;

/** True for failures that mean "try again later" rather than a bug. */
export function isTransientFailure(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; cause?: unknown } | null;
  if (!e || typeof e !== "object") return false;
  return TRANSIENT.test(`${String(e.code ?? "")} ${String(e.message ?? "")}`) || (e.cause !== undefined && e.cause !== err && isTransientFailure(e.cause));
}

/**
 * Turns any thrown value into the ConnectError a handler answers with: AppErrors keep their code,
 * an unreachable dependency is `unavailable`, anything else is `internal`. The public code and field
 * details travel as a `pgw.errors.v1.ErrorInfo` error detail (gRPC: grpc-status-details-bin).
 */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const app =
    err instanceof AppError
      ? err
      : isTransientFailure(err)
        ? new AppError("unavailable", "service temporarily unavailable", [], { cause: err })
        : new AppError("internal", "internal error", [], { cause: err });
  const info = { desc: ErrorInfoSchema, value: { code: app.code, details: app.details } };
  return new ConnectError(app.message, CONNECT_CODE[app.code], undefined, [info], app.cause ?? err);
}

/**
 * A call the transport could not carry (the connection refused, reset or lost mid-call, a TLS
 * handshake refused): connect-node reports it on this side, not read from the peer's answer, as
 * internal, unknown or aborted, with the Node error as its cause. The peer may be fine; try later.
 */
function lostInTransit(err: unknown): boolean {
  return err instanceof ConnectError && !err.isWireError && err.cause !== undefined && (err.code === Code.Internal || err.code === Code.Unknown || err.code === Code.Aborted);
}

/** Recovers the public error of a failed internal call (the inverse of toConnectError). */
export function fromConnectError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const ce = ConnectError.from(err);
  const [info] = ce.findDetails(ErrorInfoSchema);
  if (info && Object.hasOwn(ERROR_HTTP_STATUS, info.code)) {
    const details = info.details.map(({ field, issue }) => ({ field, issue }));
    return new AppError(info.code as ErrorCode, ce.rawMessage, details, { cause: ce });
  }
  const code = lostInTransit(err) ? "unavailable" : (PUBLIC_CODE_OF[ce.code] ?? "internal");
  const message = code === "internal" ? "internal error" : code === "unavailable" ? "service temporarily unavailable" : ce.rawMessage;
  return new AppError(code, message, [], { cause: ce });
}
