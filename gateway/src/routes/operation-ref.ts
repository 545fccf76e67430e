import { AppError, isUuid } from "@pgw/contracts";
import type { OperationRef } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { OperationRefSchema } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";

/** The body fields that name an operation. */
export const OPERATION_REF_FIELDS = ["operation_id", "merchant_operation_id"] as const;

/** Exactly one of operation_id (a UUID) and merchant_operation_id (non-empty), or a 400. */
export function operationRef(fields: { operation_id?: string; merchant_operation_id?: string }): MessageInitShape<typeof OperationRefSchema> & { ref: OperationRef["ref"] } {
  const { operation_id: id, merchant_operation_id: moid } = fields;
  if ((id === undefined) === (moid === undefined)) {
    const issue = id === undefined ? "one of operation_id and merchant_operation_id is required" : "send only one of operation_id and merchant_operation_id";
    throw new AppError("validation_error", issue, [{ field: id === undefined ? "operation_id" : "merchant_operation_id", issue }]);
  }
  if (id !== undefined) {
    if (!isUuid(id)) throw new AppError("validation_error", "operation_id must be a UUID", [{ field: "operation_id", issue: "must be a UUID" }]);
    return { ref: { case: "operationId", value: id.toLowerCase() } };
  }
  if (!moid) throw new AppError("validation_error", "merchant_operation_id must not be empty", [{ field: "merchant_operation_id", issue: "must not be empty" }]);
  return { ref: { case: "merchantOperationId", value: moid } };
}
