import type Router from "@koa/router";
import type { ErrorDetail } from "@pgw/contracts";
import type { Merchant } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import type { GatewayClients } from "../clients";
import { shopJson } from "./accounts-routes";
import { pageAnswer, pageQuery, queryParam, refuseBadQuery, rowKey, uuidParam } from "./page-query";

const merchantJson = (m: Merchant) => ({ id: m.id, name: m.name, created_at: m.createdAt });

/**
 * Admin API listings of merchants and shops, newest first, each `{items, next_cursor}`:
 * `GET /admin/api/merchants?q=&cursor=&limit=` and `GET /admin/api/shops?merchant_id=&q=&cursor=&limit=`,
 * where `q` is an id or part of a name (any case). A bad parameter is a 400 naming it.
 */
export function directoryAdminRoutes(router: Router, { accounts }: Pick<GatewayClients, "accounts">): void {
  router.get("/admin/api/merchants", async (ctx) => {
    const details: ErrorDetail[] = [];
    const query = queryParam(ctx.query, "q", details) ?? "";
    const page = pageQuery(ctx.query, details);
    refuseBadQuery(details);
    const { merchants } = await accounts.listMerchants({ query, after: page.after, limit: page.limit + 1 });
    ctx.body = pageAnswer(merchants, page.limit, rowKey, merchantJson);
  });

  router.get("/admin/api/shops", async (ctx) => {
    const details: ErrorDetail[] = [];
    const query = queryParam(ctx.query, "q", details) ?? "";
    const merchantId = uuidParam(ctx.query, "merchant_id", details);
    const page = pageQuery(ctx.query, details);
    refuseBadQuery(details);
    const { shops } = await accounts.listShops({ merchantId, query, after: page.after, limit: page.limit + 1 });
    ctx.body = pageAnswer(shops, page.limit, rowKey, shopJson);
  });
}
