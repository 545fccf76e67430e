/**
 * Allocate: place an operation at the first candidate route's provider that accepts within the
 * budget. Steps: validate → load (an existing allocation answers again) → decide (candidates, fx)
 * → call providers (outside any transaction) → save → on a lost race, undo at the provider.
 * An operation no route could ever carry (none for its method, currency pair or amount, or no fx
 * rate for its conversion) is refused as a validation_error naming the field, without asking any
 * provider; no_provider_available is only for candidates whose providers all refused or timed out.
 * CheckRoutable answers that first refusal alone, for an operation described but not placed.
 */
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { AppError, fieldError, formatRequestAmount, parseRequestAmount, requireUuid, type Currency } from "@pgw/contracts";
import { isUniqueViolation, type DataKeys } from "@pgw/kit/db";
import type { AllocateRequest, AllocateResponseSchema, FxQuote, RoutingService } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import { failureOf, ProviderError, type Placement, type ProviderFailure, type Requisites } from "../connectors/connector";
import { withTimeout } from "../connectors/http";
import { allocateOnExisting } from "../domain/allocation";
import { Budget, budgetMs } from "../domain/budget";
import { needsConversion, OPERATION_TYPES, permanentRefusal, selectCandidates, type OperationType, type RouteAsk } from "../domain/candidates";
import { fxQuote, formatRate, isValidRate, type FxQuoteFacts } from "../domain/fx";
import { attachPlacementToTombstone, findAllocation, hasAllocation, insertAllocation, latestFxRate, recordUnsettledPlacement, type AllocationRow, type RouteWithProvider } from "../store";
import { callbackUrlFor, providerOf, type RoutingDeps } from "./deps";
import { noFxRate } from "./fx";
import { cancelAtProvider, reportFundsTakenBeforeCancel } from "./release";
import { requireCurrency, requireText } from "./validate";

type AllocateAnswer = MessageInitShape<typeof AllocateResponseSchema>;

interface AllocateInput extends RouteAsk {
  operationId: string;
  currency: Currency;
  settlementCurrency: Currency;
  destination: Requisites;
  clientId: string;
  clientIp?: string;
  /** The caller's conversion quote, carried instead of quoting again. */
  quoted?: FxQuoteFacts;
}

/** Unknown outcomes are first checked this long after the Allocate's budget ends. */
const SETTLE_MARGIN_MS = 2000;

const noProvider = () => new AppError("no_provider_available", "no provider accepted the operation");
const cancelled = () => new AppError("invalid_state", "operation cancelled");

/** The route question of an Allocate or a CheckRoutable: type, method, amount and currencies. */
function validateAsk(req: Pick<AllocateRequest, "type" | "method" | "amount" | "currency" | "settlementCurrency">): RouteAsk & { currency: Currency; settlementCurrency: Currency } {
  if (!(OPERATION_TYPES as readonly string[]).includes(req.type)) throw fieldError("type", "must be payment or payout");
  const amount = parseRequestAmount(req.amount);
  if (!amount) throw fieldError("amount", "must be a positive decimal with at most 2 places");
  const currency = requireCurrency(req.currency, "currency");
  const settlementCurrency = req.settlementCurrency ? requireCurrency(req.settlementCurrency, "settlement_currency") : currency;
  return { type: req.type as OperationType, method: requireText(req.method, "method"), amount, currency, settlementCurrency };
}

function validate(req: AllocateRequest): AllocateInput {
  const operationId = requireUuid(req.operationId, "operation_id");
  const ask = validateAsk(req);
  const destination: Requisites = { number: req.destination?.number, name: req.destination?.name, bankname: req.destination?.bankname };
  if (req.type === "payout") requireText(destination.number, "destination.number");
  const quoted = req.fx && quotedFx(req.fx, ask.currency, ask.settlementCurrency);
  return { ...ask, operationId, destination, clientId: req.clientId, clientIp: req.clientIp, quoted };
}

/** A caller's quote: only for a conversion into the settlement currency, at a rate stored exactly. */
function quotedFx(fx: FxQuote, currency: Currency, settlementCurrency: Currency): FxQuoteFacts {
  if (currency === settlementCurrency) throw fieldError("fx", "is only for a conversion");
  if (fx.targetCurrency !== settlementCurrency) throw fieldError("fx.target_currency", "must be the settlement currency");
  if (!isValidRate(fx.rate) || formatRate(fx.rate) !== fx.rate) throw fieldError("fx.rate", "must be a positive decimal string with at most 10 places");
  return { source: requireText(fx.source, "fx.source"), rate: fx.rate, targetCurrency: settlementCurrency };
}

/** The answer for a stored allocation (the first answer and every repeat are the same), its number opened. */
function answerOf(row: AllocationRow, keys: DataKeys): AllocateAnswer {
  return {
    allocationId: row.id,
    requiresReceipt: row.requiresReceipt,
    requisites: { number: row.requisitesNumber ? keys.read(row.requisitesNumber) : undefined, name: row.requisitesName ?? undefined, bankname: row.requisitesBankname ?? undefined },
    fx: row.fxSource && row.fxRate && row.settlementCurrency ? { source: row.fxSource, rate: formatRate(row.fxRate.toString()), targetCurrency: row.settlementCurrency } : undefined,
    expiresAt: row.expiresAt?.toISOString(),
  };
}

/**
 * Failures after which the provider may still have placed the operation: no answer in time, or an
 * answer we could not read. A refusal (4xx) or an error answer (5xx) placed nothing.
 */
const UNCERTAIN: ReadonlySet<ProviderFailure> = new Set(["timeout", "failed"]);

/**
 * One attempt at one route's provider: its placement, or null when it refused, failed or timed out.
 * An attempt whose outcome is unknown is recorded, to be checked (and undone) at the provider from
 * `settleAfter`, once this Allocate is over (jobs/unsettled-placements.ts).
 */
async function attempt(deps: RoutingDeps, route: RouteWithProvider, input: AllocateInput, timeoutMs: number, caller: AbortSignal, settleAfter: Date): Promise<Placement | null> {
  const { endpoint, connector } = providerOf(deps, route.provider);
  const common = { operationId: input.operationId, method: input.method, amount: formatRequestAmount(input.amount), currency: input.currency, callbackUrl: callbackUrlFor(deps, route.provider.code) };
  const started = Date.now();
  const facts = { operationId: input.operationId, provider: route.provider.code, routeId: route.id, timeoutMs };
  try {
    const placement = await withTimeout(timeoutMs, caller, (signal) =>
      input.type === "payment"
        ? connector.createPayin(endpoint, { ...common, clientId: input.clientId, clientIp: input.clientIp }, signal)
        : connector.createPayout(endpoint, { ...common, destination: input.destination }, signal),
    );
    deps.log.info({ ...facts, outcome: "accepted", reference: placement.reference, ms: Date.now() - started }, "provider attempt");
    return placement;
  } catch (err) {
    const outcome = failureOf(err);
    // A provider's refusal or silence is an answer, logged without a stack; anything else is a fault of ours.
    const why = err instanceof ProviderError ? { message: err.message } : { err };
    deps.log.info({ ...facts, outcome, ms: Date.now() - started, ...why }, "provider attempt");
    if (UNCERTAIN.has(outcome)) {
      await recordUnsettledPlacement(deps.sql, { operationId: input.operationId, providerId: route.provider.id, type: input.type, firstCheckAt: settleAfter }).catch((e: unknown) =>
        deps.log.error({ ...facts, err: e, alert: "unsettled_placement_not_recorded" }, "could not record a provider create with an unknown outcome; the provider may hold an operation nobody tracks"),
      );
    }
    return null;
  }
}

/** Stores the accepted placement; when the operation got a row meanwhile, undoes ours at the provider. */
async function save(deps: RoutingDeps, input: AllocateInput, route: RouteWithProvider, placement: Placement, fx: FxQuoteFacts | undefined): Promise<AllocateAnswer> {
  const requisites = input.type === "payment" ? (placement.requisites ?? {}) : input.destination;
  let inserted: AllocationRow | undefined;
  try {
    inserted = await insertAllocation(deps.sql, {
      operationId: input.operationId,
      providerId: route.provider.id,
      routeId: route.id,
      providerReference: placement.reference,
      type: input.type,
      method: input.method,
      amount: input.amount.toFixed(2),
      currency: input.currency,
      settlementCurrency: input.settlementCurrency,
      requisitesNumber: requisites.number ? deps.keys.seal(requisites.number) : null,
      requisitesName: requisites.name ?? null,
      requisitesBankname: requisites.bankname ?? null,
      requiresReceipt: route.requiresReceipt || placement.requiresReceipt,
      fxSource: fx?.source ?? null,
      fxRate: fx?.rate ?? null,
      expiresAt: placement.expiresAt ?? null,
    });
  } catch (err) {
    // A concurrent Allocate of this operation that got the same reference (a provider deduplicating
    // by operation_id) can trip the unique provider reference before the operation_id arbiter sees
    // its row: that is a lost race like the one below, and the placement is the winner's, not ours to cancel.
    if (!isUniqueViolation(err)) {
      await cancelAtProvider(deps, route.provider, placement.reference, input.operationId, "allocation could not be stored");
      throw err;
    }
    inserted = undefined;
  }
  if (inserted) return answerOf(inserted, deps.keys);
  const row = await findAllocation(deps.sql, input.operationId);
  if (!row) {
    // The insert conflicted, yet the operation has no row: the reference is another operation's.
    // Cancelling it at the provider could cancel that operation's placement, so it is only reported.
    deps.log.error({ operationId: input.operationId, provider: route.provider.code, reference: placement.reference }, "the provider answered a reference another operation holds");
    throw new Error(`allocation of ${input.operationId} could not be stored: its provider reference is another operation's`);
  }
  if (allocateOnExisting(row.status) === "cancelled") {
    await attachPlacementToTombstone(deps.sql, input.operationId, { providerId: route.provider.id, routeId: route.id, providerReference: placement.reference, type: input.type, currency: input.currency });
    await cancelAtProvider(deps, route.provider, placement.reference, input.operationId, "operation cancelled while allocating");
    await reportFundsTakenBeforeCancel(deps, route.provider, placement.reference, input.operationId, input.type);
    throw cancelled();
  }
  // A concurrent Allocate stored first. A provider that deduplicates by operation_id gave us both
  // the same reference, which must stay; anything else we placed is undone.
  const same = row.providerId === route.provider.id && row.providerReference === placement.reference;
  if (!same) await cancelAtProvider(deps, route.provider, placement.reference, input.operationId, "operation allocated concurrently");
  return answerOf(row, deps.keys);
}

/** The fx quote an auto-conversion allocation carries (undefined without conversion). */
async function quoteFor(deps: RoutingDeps, input: AllocateInput): Promise<FxQuoteFacts | undefined> {
  if (!needsConversion(input)) return undefined;
  const rate = await latestFxRate(deps.sql, input.currency, input.settlementCurrency);
  if (!rate) {
    deps.log.warn({ operationId: input.operationId, currency: input.currency, settlementCurrency: input.settlementCurrency }, "no fx rate for a conversion route");
    throw noFxRate(input.settlementCurrency);
  }
  return fxQuote(rate.source, rate.rate.toString(), input.settlementCurrency);
}

export async function allocate(deps: RoutingDeps, req: AllocateRequest, ctx: Pick<HandlerContext, "signal">): Promise<AllocateAnswer> {
  const budget = new Budget(budgetMs(req.budgetMs, deps.defaultBudgetMs));
  const input = validate(req);

  // Nearly every Allocate is a first one: probe cheaply before loading the allocation.
  const existing = (await hasAllocation(deps.sql, input.operationId)) ? await findAllocation(deps.sql, input.operationId) : null;
  if (existing) {
    if (allocateOnExisting(existing.status) === "cancelled") throw cancelled();
    return answerOf(existing, deps.keys);
  }

  const candidates = selectCandidates(await routableRoutes(deps, input), input);
  const fx = input.quoted ?? (await quoteFor(deps, input));

  for (const [i, route] of candidates.entries()) {
    const timeoutMs = budget.attemptTimeout(route.provider.timeoutMs, i === candidates.length - 1);
    if (timeoutMs === null || ctx.signal.aborted) break;
    const placement = await attempt(deps, route, input, timeoutMs, ctx.signal, new Date(Date.now() + budget.remaining() + SETTLE_MARGIN_MS));
    if (placement) return save(deps, input, route, placement, fx);
  }
  deps.log.warn({ operationId: input.operationId, candidates: candidates.length, budgetLeftMs: budget.remaining() }, "no provider accepted");
  throw noProvider();
}

/**
 * The routes of the operation's type and method, once some route could carry it as asked; else
 * the validation_error naming what no route allows: the request is at fault, not the providers
 * (no 503 to retry on).
 */
async function routableRoutes(deps: RoutingDeps, ask: RouteAsk & { operationId?: string }) {
  const routes = (await deps.routesFor(ask)).map((r) => ({ ...r, providerEnabled: r.provider.enabled }));
  const refusal = permanentRefusal(routes, ask);
  if (refusal) {
    deps.log.info({ operationId: ask.operationId, type: ask.type, method: ask.method, currency: ask.currency, settlementCurrency: ask.settlementCurrency, refusal }, "no route can carry the operation");
    throw fieldError(refusal.field, refusal.issue);
  }
  return routes;
}

export function allocateHandlers(deps: RoutingDeps): Pick<ServiceImpl<typeof RoutingService>, "allocate" | "checkRoutable"> {
  return {
    allocate: (req, ctx) => allocate(deps, req, ctx),
    checkRoutable: async (req) => {
      await routableRoutes(deps, validateAsk(req));
      return {};
    },
  };
}
