import { AppError, isUuid } from "@pgw/contracts";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { StatusChangeSchema } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { Status } from "../domain/lifecycle";
import { auditActionOf, statusCause } from "../domain/status-cause";
import { auditOf, cancellingCommand, findOperationById, statusChangesOf, type OperationRow, type Sql } from "../store";

type StatusChangeWire = MessageInitShape<typeof StatusChangeSchema>;

/**
 * GetOperationHistory: an operation of any shop with its status changes, each with its cause and,
 * for a decision, who made it and why (the audit of reviews and manual checks, the cancel command's
 * reason). NOT_FOUND for an unknown id or a create still in flight.
 */
export function operationHistory(sql: Sql) {
  return async (operationId: string): Promise<{ row: OperationRow; changes: StatusChangeWire[] }> => {
    const row = isUuid(operationId) ? await findOperationById(sql, operationId.toLowerCase()) : null;
    if (!row || row.status === "creating") throw new AppError("not_found", "operation not found");
    const [changes, audit, cancel] = await Promise.all([statusChangesOf(sql, row.id), auditOf(sql, row.id), cancellingCommand(sql, row.id)]);
    return {
      row,
      changes: changes.map((c): StatusChangeWire => {
        const cause = statusCause(c.fromStatus as Status, c.toStatus as Status);
        const action = auditActionOf(cause, c.toStatus as Status);
        // Each status is entered at most once (the lifecycle never goes back), so one decision matches.
        const decision = action ? audit.find((a) => a.action === action) : undefined;
        return {
          fromStatus: c.fromStatus,
          toStatus: c.toStatus,
          at: c.changedAt.toISOString(),
          cause,
          actor: decision?.actor,
          reason: (decision ? decision.reason : cause === "cancel" ? cancel?.reason : undefined) || undefined,
        };
      }),
    };
  };
}
