/** QuoteFx: the rate auto-conversion routes use between two currencies. */
import type { ServiceImpl } from "@connectrpc/connect";
import { fieldError, type AppError } from "@pgw/contracts";
import type { RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import { fxQuote } from "../domain/fx";
import { latestFxRate } from "../store";
import type { RoutingDeps } from "./deps";
import { requireCurrency } from "./validate";

/**
 * A conversion without a rate can never be carried out until one is configured: a validation_error
 * naming the operation's currency, for the create to answer as it is.
 */
export function noFxRate(settlementCurrency: string): AppError {
  return fieldError("currency", `cannot be converted to this shop's settlement currency (${settlementCurrency}): no exchange rate is configured`);
}

export function fxHandlers(deps: RoutingDeps): Pick<ServiceImpl<typeof RoutingService>, "quoteFx"> {
  return {
    async quoteFx(req) {
      const currency = requireCurrency(req.currency, "currency");
      const target = requireCurrency(req.settlementCurrency, "settlement_currency");
      const rate = await latestFxRate(deps.sql, currency, target);
      if (!rate) throw noFxRate(target);
      return { fx: fxQuote(rate.source, rate.rate.toString(), target) };
    },
  };
}
