import type { ServiceImpl } from "@connectrpc/connect";
import { AppError, quote, quoteFigures, requireUuid, tariffFields, type OperationKind, type Quote, type Tariff } from "@pgw/contracts";
import type { LedgerService } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { FX_RATE_SCALE, parseAmount, parseCurrency, parseDecimal, parseText } from "../domain/amounts";
import type { TariffLookup } from "../store/tariffs";
import type { LedgerDeps } from "./deps";

/** The request fields a quote is made of (QuoteRequest, ReserveRequest). */
export interface QuoteFields {
  shopId: string;
  method: string;
  amount: string;
  currency: string;
  settlementCurrency: string;
  fxRate?: string;
}

function operationKind(type: string): OperationKind {
  if (type === "payment" || type === "payout") return type;
  throw new AppError("validation_error", "type must be payment or payout", [{ field: "type", issue: "must be payment or payout" }]);
}

/** A quote with the tariff it applied. */
export interface AppliedQuote {
  quote: Quote;
  tariff: Tariff;
}

/**
 * Validates the fields and quotes them with the shop's tariff (else the default one).
 * Errors: validation_error (a malformed field, a conversion without fx_rate, no tariff for the method).
 */
export async function quoteOperation(tariffs: TariffLookup, type: OperationKind, f: QuoteFields): Promise<AppliedQuote> {
  const shopId = requireUuid(f.shopId, "shop_id");
  const method = parseText(f.method, "method", 64);
  const currency = parseCurrency(f.currency, "currency");
  const settlementCurrency = parseCurrency(f.settlementCurrency, "settlement_currency");
  const amount = parseAmount(f.amount, "amount", currency);
  const fxRate = f.fxRate === undefined ? undefined : parseDecimal(f.fxRate, "fx_rate", FX_RATE_SCALE);
  const tariff = await tariffs(shopId, type, method, settlementCurrency);
  if (!tariff) throw new AppError("validation_error", `no ${type} tariff for method ${method} in ${settlementCurrency}`, [{ field: "method", issue: "has no tariff" }]);
  return { quote: quote({ type, amount, currency, settlementCurrency, fxRate, tariff }), tariff };
}

/**
 * Domain → wire: every figure at the settlement currency's scale, and the tariff applied (which
 * operations keeps, so that the completion settles with it).
 */
export function appliedQuoteFields(q: Quote, tariff: Tariff) {
  return { ...quoteFigures(q), appliedTariff: tariffFields(tariff) };
}

/** Quote: commission, settlement and recorded amounts of an operation, and its tariff; nothing is written. */
export function quoteHandlers({ quoteTariffs }: LedgerDeps): Pick<ServiceImpl<typeof LedgerService>, "quote"> {
  return {
    async quote(req) {
      const applied = await quoteOperation(quoteTariffs, operationKind(req.type), req);
      return appliedQuoteFields(applied.quote, applied.tariff);
    },
  };
}
