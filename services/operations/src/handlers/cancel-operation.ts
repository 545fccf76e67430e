import { AppError, requireUuid } from "@pgw/contracts";
import { isTransientFailure } from "@pgw/kit/rpc";
import type { CancelOperationRequest } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { transition, UNCAPTURED_FIGURES, type Status } from "../domain/lifecycle";
import { writeStatusChange } from "../events";
import { lateFundsOnUncapturedEnd } from "./reported-funds";
import { firstCancellation, insertCancellation, limitLockWait, lockOperation, type OperationKey, type OperationRow } from "../store";
import type { Deps } from "./deps";

/** Longest accepted reason, in UTF-8 bytes (docs/api.md, Cancel). */
export const MAX_REASON_BYTES = 2048;
/** The reason recorded when none is given. */
export const DEFAULT_REASON = "cancel";

export type CancelOutcome = "cancelled" | "already_terminal";

/** The operation key of a request; exactly one identifier, the UUID checked. */
export function operationKey(ref: CancelOperationRequest["ref"]): OperationKey {
  if (ref?.ref.case === "operationId") return { operationId: requireUuid(ref.ref.value, "operation_id") };
  if (ref?.ref.case === "merchantOperationId" && ref.ref.value) return { merchantOperationId: ref.ref.value };
  throw new AppError("validation_error", "exactly one of operation_id and merchant_operation_id is required", [{ field: "operation_id", issue: "exactly one identifier is required" }]);
}

/**
 * CancelOperation: a durable decision before any answer. By merchant_operation_id it can beat an
 * in-flight Create (the `creating` row becomes cancelled, without details). Repeats answer the
 * first decision and change nothing; payouts are 412; terminal operations are `already_terminal`.
 */
export function cancelOperationHandler({ sql, log, cancelDeadlineMs }: Pick<Deps, "sql" | "log" | "cancelDeadlineMs">) {
  return async (req: CancelOperationRequest): Promise<{ outcome: CancelOutcome; row: OperationRow }> => {
    const shopId = requireUuid(req.shopId, "shop_id");
    const key = operationKey(req.ref);
    if (Buffer.byteLength(req.reason, "utf8") > MAX_REASON_BYTES) {
      throw new AppError("validation_error", `reason must be at most ${MAX_REASON_BYTES} bytes`, [{ field: "reason", issue: `must be at most ${MAX_REASON_BYTES} bytes` }]);
    }
    const reason = req.reason || DEFAULT_REASON;
    try {
      return await sql.$transaction(
        async (tx) => {
          await limitLockWait(tx, Math.max(cancelDeadlineMs - 500, 100));
          const row = await lockOperation(tx, shopId, key);
          // A create still running is invisible by operation_id: the merchant cannot know that id yet.
          if (!row || (row.status === "creating" && "operationId" in key)) throw new AppError("not_found", "operation not found");
          if (row.type === "payout") throw new AppError("invalid_state", "payouts cannot be cancelled");
          const first = await firstCancellation(tx, row.id);
          if (first && row.status === "cancelled") return { outcome: "cancelled" as const, row };
          const next = transition(row.status as Status, { kind: "cancel", type: "payment" });
          if ("refused" in next && next.refused !== "already_terminal") throw new AppError("invalid_state", `a payment in status ${row.status} cannot be cancelled`);
          const outcome: CancelOutcome = "to" in next ? "cancelled" : "already_terminal";
          await insertCancellation(tx, { operationId: row.id, reason, outcome });
          if (outcome === "already_terminal") return { outcome, row };
          const updated = await writeStatusChange(tx, row, { status: "cancelled", ...UNCAPTURED_FIGURES });
          await lateFundsOnUncapturedEnd(tx, updated, log);
          return { outcome, row: updated };
        },
        { timeout: cancelDeadlineMs, maxWait: Math.min(2000, cancelDeadlineMs) },
      );
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (isTransientFailure(err)) {
        log.warn({ err }, "cancel not decided before the deadline");
        throw new AppError("unavailable", "cancellation could not be durably accepted; retry the same command", [], { cause: err });
      }
      throw err;
    }
  };
}
