/**
 * A payment's figures at create without a call to the ledger for each one: the first create of a
 * shop, method and settlement currency asks the ledger's Quote, which answers the tariff it applied;
 * later creates apply that tariff here, with the rule the ledger runs (`quote` in @pgw/contracts).
 * The tariffs are kept only while the ledger's change signal is followed (main.ts): a tariff
 * changed by SQL reaches new creates once a ledger replica heard of it, as it reaches the ledger's
 * own cache. Refusals (no tariff for the method) always come from the ledger: a load that fails is
 * not kept.
 */
import type { Client } from "@connectrpc/connect";
import { figuresByTariff, Money, tariffFields, tariffOf, type Tariff, type TariffFields } from "@pgw/contracts";
import type { NotifiedCache } from "@pgw/kit/db";
import type { LedgerService, QuoteRequest, QuoteResponse } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";

/** The fields of a payment's quote: QuoteRequest's, the type being payment. */
export type PaymentQuoteRequest = Pick<QuoteRequest, "shopId" | "method" | "amount" | "currency" | "settlementCurrency" | "fxRate">;

/** Commission and settlement at the settlement currency's scale, and the tariff they came from. */
export interface PaymentFigures {
  commissionAmount: string;
  settlementAmount: string;
  settlementCurrency: string;
  appliedTariff?: TariffFields;
}

export type PaymentQuotes = (req: PaymentQuoteRequest) => Promise<PaymentFigures>;

/** Tariffs by shop, method and settlement currency; null when the ledger answered none (it predates `applied_tariff`). */
export type KeptTariffs = NotifiedCache<string, Tariff | null>;

/** The figures by `tariff`, as the ledger's Quote computes them; null when a currency is one no tariff settles. */
function figuresBy(tariff: Tariff, req: PaymentQuoteRequest): PaymentFigures | null {
  const fxRate = req.fxRate === undefined ? undefined : new Money(req.fxRate);
  const figures = figuresByTariff({ type: "payment", tariff, amount: new Money(req.amount), currency: req.currency, settlementCurrency: req.settlementCurrency, fxRate });
  return figures && { ...figures, appliedTariff: tariffFields(tariff) };
}

export function paymentQuotes(ledger: Client<typeof LedgerService>, tariffs: KeptTariffs): PaymentQuotes {
  const ask = (req: PaymentQuoteRequest) => ledger.quote({ ...req, type: "payment" });
  return async (req) => {
    let answered: QuoteResponse | undefined;
    const tariff = await tariffs.get(`${req.shopId} ${req.method} ${req.settlementCurrency}`, async () => {
      answered = await ask(req);
      return tariffOf(answered.appliedTariff);
    });
    if (answered) return answered;
    return (tariff && figuresBy(tariff, req)) ?? ask(req);
  };
}
