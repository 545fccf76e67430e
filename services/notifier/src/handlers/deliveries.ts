import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, requireUuid } from "@pgw/contracts";
import type { NotifierService } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";
import { findDelivery, listDeliveries, redeliver } from "../store";
import type { NotifierDeps } from "./deps";
import { deliveryWire } from "./wire";

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 500;

/**
 * ListDeliveries: the shop's latest deliveries (of one operation, when asked) with their attempt logs, newest first (limit 0 →
 * 50, at most 500). Redeliver: schedules a delivery again now with the same webhook-id and a
 * fresh retry schedule (see store.redeliver). Errors: validation_error, not_found.
 */
export function deliveryHandlers(deps: NotifierDeps): Pick<ServiceImpl<typeof NotifierService>, "listDeliveries" | "redeliver"> {
  return {
    async listDeliveries(req) {
      const shopId = requireUuid(req.shopId, "shop_id");
      if (req.limit < 0) throw new AppError("validation_error", "invalid limit", [{ field: "limit", issue: "must not be negative" }]);
      const limit = Math.min(req.limit || DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
      const operationId = req.operationId === undefined ? undefined : requireUuid(req.operationId, "operation_id");
      return { deliveries: (await listDeliveries(deps.db, shopId, limit, operationId)).map(deliveryWire) };
    },

    async redeliver(req) {
      const id = requireUuid(req.deliveryId, "delivery_id");
      const outcome = await redeliver(deps.db, id);
      if (outcome === "not_found") throw new AppError("not_found", "delivery not found");
      if (outcome === "in_flight") throw new AppError("invalid_state", "an attempt of this delivery is in flight; redeliver it once that attempt has finished");
      deps.wake();
      const delivery = await findDelivery(deps.db, id);
      deps.log.info({ delivery_id: id }, "webhook redelivery scheduled");
      return { delivery: deliveryWire(delivery!) };
    },
  };
}
