import { AppError, isUuid } from "@pgw/contracts";
import type { GatewayClients } from "../clients";

/**
 * What the admin sees of one operation (any shop): the operation with its status changes (from
 * operations), its webhook deliveries (notifier) and its confirmations with the review's findings
 * (receipts). A malformed or unknown id is not_found.
 */
export async function operationTimeline(clients: Pick<GatewayClients, "operations" | "notifier" | "receipts">, operationId: string) {
  if (!isUuid(operationId)) throw new AppError("not_found", "operation not found");
  const { operation, statusChanges } = await clients.operations.getOperationHistory({ operationId });
  const op = operation!;
  const [{ deliveries }, { confirmations }] = await Promise.all([
    clients.notifier.listDeliveries({ shopId: op.shopId, operationId: op.operationId, limit: 100 }),
    clients.receipts.listConfirmations({ operationId: op.operationId }),
  ]);
  return { operation: op, statusChanges, deliveries, confirmations };
}
