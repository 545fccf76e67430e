/** What a fresh routing database is seeded with: routes to the sandbox provider and FX rates. */
import type { OperationType } from "./candidates";

export const DEFAULT_METHODS = ["WT_RUB_C2C", "WT_RUB_PHONE"] as const;

/** Operation currency → settlement currency; a pair of different currencies converts. */
export const DEFAULT_CURRENCY_PAIRS: readonly [string, string][] = [
  ["RUB", "RUB"],
  ["USDT", "USDT"],
  ["RUB", "USDT"],
  ["USDT", "RUB"],
];

export const DEFAULT_PRIORITY = 100;
export const DEFAULT_MIN_AMOUNT = "1.00";
export const DEFAULT_MAX_AMOUNT = "1000000.00";

export interface DefaultRoute {
  type: OperationType;
  method: string;
  currency: string;
  settlementCurrency: string;
  priority: number;
  minAmount: string;
  maxAmount: string;
  requiresReceipt: boolean;
  autoConversion: boolean;
}

/** Every (type × method × currency pair) route of the default seed. */
export function defaultRoutes(): DefaultRoute[] {
  const types: OperationType[] = ["payment", "payout"];
  return types.flatMap((type) =>
    DEFAULT_METHODS.flatMap((method) =>
      DEFAULT_CURRENCY_PAIRS.map(([currency, settlementCurrency]) => ({
        type,
        method,
        currency,
        settlementCurrency,
        priority: DEFAULT_PRIORITY,
        minAmount: DEFAULT_MIN_AMOUNT,
        maxAmount: DEFAULT_MAX_AMOUNT,
        requiresReceipt: false,
        autoConversion: currency !== settlementCurrency,
      })),
    ),
  );
}

/** Name of the seeded rate source. */
export const DEFAULT_FX_SOURCE = "sandbox-fx";

/** Seeded rates (base → quote): about 92 RUB per USDT; the inverse carries a small spread. */
export const DEFAULT_FX_RATES: readonly { base: string; quote: string; rate: string }[] = [
  { base: "RUB", quote: "USDT", rate: "0.0108401084" },
  { base: "USDT", quote: "RUB", rate: "91.85" },
];
