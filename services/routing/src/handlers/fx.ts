/** QuoteFx: the rate auto-conversion routes use between two currencies. */
import type { ServiceImpl } from "@connectrpc/connect";
import { AppError } from "@pgw/kit";
import type { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import { fxQuote } from "../domain/fx";
import { latestFxRate } from "../store";
import type { RoutingDeps } from "./deps";
import { requireCurrency } from "./validate";

export function fxHandlers(deps: RoutingDeps): Pick<ServiceImpl<typeof RoutingService>, "quoteFx"> {
  return {
    async quoteFx(req) {
      const currency = requireCurrency(req.currency, "currency");
      const target = requireCurrency(req.settlementCurrency, "settlement_currency");
      const rate = await latestFxRate(deps.sql, currency, target);
      if (!rate) throw new AppError("not_found", `no fx rate from ${currency} to ${target}`);
      return { fx: fxQuote(rate.source, rate.rate.toString(), target) };
    },
  };
}
