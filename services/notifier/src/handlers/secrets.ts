import { requireUuid } from "@pgw/contracts";
import type { ServiceImpl } from "@connectrpc/connect";
import type { NotifierService } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";
import { rotateSecret } from "../store";
import type { NotifierDeps } from "./deps";

/**
 * RotateSecret: a new signing secret for the shop, returned once (it is never shown again).
 * The secrets signing until now keep signing for 24 h alongside it. Errors: validation_error.
 */
export function secretHandlers(deps: NotifierDeps): Pick<ServiceImpl<typeof NotifierService>, "rotateSecret"> {
  return {
    async rotateSecret(req) {
      const shopId = requireUuid(req.shopId, "shop_id");
      const secret = await rotateSecret(deps.db, deps.keys, shopId);
      deps.log.info({ shop_id: shopId }, "webhook secret rotated");
      return { secret };
    },
  };
}
