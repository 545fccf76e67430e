import { AppError } from "@pgw/contracts";
import type { StoredOperation } from "../store";
import { isUuid } from "@pgw/contracts";
import type { SandboxDeps } from "./deps";

function orNotFound(op: StoredOperation | null): StoredOperation {
  if (!op) throw new AppError("not_found", "operation not found");
  return op;
}

/** The operation with this provider reference; `not_found` otherwise. */
export async function byReference(deps: SandboxDeps, reference: string): Promise<StoredOperation> {
  return orNotFound(await deps.store.byReference(reference));
}

/** The operation created for this gateway operation id; `not_found` otherwise (also for a non-UUID). */
export async function byOperationId(deps: SandboxDeps, operationId: string): Promise<StoredOperation> {
  return orNotFound(isUuid(operationId) ? await deps.store.byOperationId(operationId.toLowerCase()) : null);
}
