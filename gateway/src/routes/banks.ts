import type Router from "@koa/router";
import { AppError } from "@pgw/kit";
import type { GatewayClients } from "../clients";

/** GET /v1/banks?currency=RUB: the codes `bankname` accepts and the names shown as bankname_details. */
export function banksRoute(router: Router, clients: GatewayClients): void {
  router.get("/v1/banks", async (ctx) => {
    const currency = typeof ctx.query.currency === "string" ? ctx.query.currency : "RUB";
    if (!["RUB", "USDT"].includes(currency)) throw new AppError("validation_error", "unsupported currency", [{ field: "currency", issue: "must be RUB or USDT" }]);
    const res = await clients.operations.listBanks({ currency });
    ctx.body = { banks: res.banks.map((b) => ({ code: b.code, name: b.name })) };
  });
}
