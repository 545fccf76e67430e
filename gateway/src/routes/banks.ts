import type Router from "@koa/router";
import { AppError } from "@pgw/contracts";
import type { GatewayClients } from "../clients";

/** GET /v1/banks?currency=RUB: the bank codes a payout's `bankname` may carry, each with the name `bankname_details` shows. */
export function banksRoute(router: Router, clients: GatewayClients): void {
  router.get("/v1/banks", async (ctx) => {
    // Without a currency: RUB's, the only dictionary with entries (docs/api.md, GET /v1/banks). Given twice:
    // refused, not guessed.
    const currency = ctx.query.currency === undefined ? "RUB" : ctx.query.currency;
    if (typeof currency !== "string" || !["RUB", "USDT"].includes(currency)) throw new AppError("validation_error", "unsupported currency", [{ field: "currency", issue: "must be RUB or USDT" }]);
    const res = await clients.operations.listBanks({ currency });
    ctx.body = { banks: res.banks.map((b) => ({ code: b.code, name: b.name })) };
  });
}
