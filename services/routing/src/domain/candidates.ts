/**
 * Candidate selection: which routes may carry an operation, and in which order they are tried.
 * Pure: routes and the request come in, an ordered list goes out.
 */
import type Decimal from "decimal.js";

/** payment (pay-in: the payer sends money to requisites we hand out) or payout. */
export type OperationType = "payment" | "payout";
export const OPERATION_TYPES: readonly OperationType[] = ["payment", "payout"];

/** What a route needs to be judged; storage rows are mapped to this by the store. */
export interface RouteFacts {
  id: string;
  type: string;
  method: string;
  currency: string;
  settlementCurrency: string;
  priority: number;
  minAmount: Decimal;
  maxAmount: Decimal;
  autoConversion: boolean;
  enabled: boolean;
  providerEnabled: boolean;
}

/** The operation looking for a route. */
export interface RouteAsk {
  type: OperationType;
  method: string;
  amount: Decimal;
  currency: string;
  settlementCurrency: string;
}

/** True when the shop settles in another currency than the operation's, so the route converts. */
export function needsConversion(ask: Pick<RouteAsk, "currency" | "settlementCurrency">): boolean {
  return ask.currency !== ask.settlementCurrency;
}

/** Whether one route may carry the operation (enabled on both sides, same pair, amount within limits). */
export function routeMatches(route: RouteFacts, ask: RouteAsk): boolean {
  return (
    route.enabled &&
    route.providerEnabled &&
    route.type === ask.type &&
    route.method === ask.method &&
    route.currency === ask.currency &&
    route.settlementCurrency === ask.settlementCurrency &&
    (!needsConversion(ask) || route.autoConversion) &&
    route.minAmount.lte(ask.amount) &&
    ask.amount.lte(route.maxAmount)
  );
}

/** Routes that may carry the operation, in the order they are tried: priority (lower first), then id. */
export function selectCandidates<R extends RouteFacts>(routes: readonly R[], ask: RouteAsk): R[] {
  return routes
    .filter((r) => routeMatches(r, ask))
    .sort((a, b) => a.priority - b.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
