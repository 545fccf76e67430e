/**
 * Candidate selection: which routes may carry an operation, and in which order they are tried.
 * Pure: routes and the request come in, an ordered list goes out.
 */
import { Money } from "@pgw/contracts";
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

/** The smallest amount an operation may have (2 places). */
const SMALLEST_AMOUNT = new Money("0.01");

/** The lowest amount a route accepts: its minimum, but never below the smallest amount. */
const lowestAccepted = (route: RouteFacts): Decimal => Money.max(route.minAmount, SMALLEST_AMOUNT);

/** Whether a route is set up for the operation's type and method with limits that admit some amount, in service or not. */
function servesMethod(route: RouteFacts, ask: RouteAsk): boolean {
  return lowestAccepted(route).lte(route.maxAmount) && route.type === ask.type && route.method === ask.method;
}

/** Whether a route set up for the method also serves the currency pair (converting when the currencies differ). */
function servesPair(route: RouteFacts, ask: RouteAsk): boolean {
  return route.currency === ask.currency && route.settlementCurrency === ask.settlementCurrency && (!needsConversion(ask) || route.autoConversion);
}

const admitsAmount = (route: RouteFacts, ask: RouteAsk): boolean => route.minAmount.lte(ask.amount) && ask.amount.lte(route.maxAmount);

/** Whether one route may carry the operation (enabled on both sides, same pair, amount within limits). */
export function routeMatches(route: RouteFacts, ask: RouteAsk): boolean {
  return route.enabled && route.providerEnabled && servesMethod(route, ask) && servesPair(route, ask) && admitsAmount(route, ask);
}

/** Routes that may carry the operation, in the order they are tried: priority (lower first), then id. */
export function selectCandidates<R extends RouteFacts>(routes: readonly R[], ask: RouteAsk): R[] {
  return routes
    .filter((r) => routeMatches(r, ask))
    .sort((a, b) => a.priority - b.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Why no route can ever carry an operation as asked, whatever providers answer: the request field at fault and why. */
export interface PermanentRefusal {
  field: "method" | "currency" | "amount";
  issue: string;
}

/**
 * Why none of `routes` (those of the operation's type and method; others are ignored) can carry the
 * operation: no route set up for the method, none for its currency pair, or an amount outside every
 * such route's limits. Null when some route fits, even one switched off for now: then only the
 * providers' answers (or their being off) refuse it, a 503 to retry on.
 */
export function permanentRefusal(routes: readonly RouteFacts[], ask: RouteAsk): PermanentRefusal | null {
  // A route that would fit but is switched off (a provider under maintenance) is a temporary refusal.
  if (routes.some((r) => servesMethod(r, ask) && servesPair(r, ask) && admitsAmount(r, ask))) return null;
  const ofMethod = routes.filter((r) => servesMethod(r, ask));
  if (ofMethod.length === 0) return { field: "method", issue: `is not available for ${ask.type}s` };
  const ofPair = ofMethod.filter((r) => servesPair(r, ask));
  if (ofPair.length === 0) return { field: "currency", issue: `is not available for ${ask.method} ${ask.type}s of a shop settling in ${ask.settlementCurrency}` };
  const ranges = allowedRanges(ofPair).map(([min, max]) => `between ${min.toFixed(2)} and ${max.toFixed(2)}`);
  return { field: "amount", issue: `must be ${ranges.join(" or ")} for this method and currency` };
}

/** The amounts routes accept, as disjoint ranges in ascending order (limits are whole cents, so adjacent ones join). */
function allowedRanges(routes: readonly RouteFacts[]): [Decimal, Decimal][] {
  const sorted = routes.map((r): [Decimal, Decimal] => [lowestAccepted(r), r.maxAmount]).sort(([a], [b]) => a.comparedTo(b));
  const merged: [Decimal, Decimal][] = [];
  for (const [min, max] of sorted) {
    const last = merged[merged.length - 1];
    if (last && min.lte(last[1].plus(SMALLEST_AMOUNT))) last[1] = Money.max(last[1], max);
    else merged.push([min, max]);
  }
  return merged;
}
