import { AppError, requireUuid, tariffOf, type TariffFields } from "@pgw/contracts";
import { fromConnectError } from "@pgw/kit/rpc";
import { noteOnSpan } from "@pgw/kit/runtime";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AllocateResponse, CheckRoutableRequestSchema, FxQuote } from "@pgw/proto/gen/pgw/routing/v1/routing_pb";
import { OperationType, type CreateOperationRequest } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { createDeadline } from "../domain/create-deadline";
import { requestHash, validateCreate, type CreateCommand, type CreateInput } from "../domain/create-rules";
import { transition } from "../domain/lifecycle";
import { statusChangedEvent } from "../events";
import { countStatusChange } from "../metrics";
import { abandonedAfterMs, releaseAbandonedCreate } from "../jobs/abandoned-creates";
import { claimInShop, findCreateShop, findOperation, findOperationById, insertCreating, releaseCreating, updateOperationFromWithEvent, type CreateShop, type OperationRow } from "../store";
import type { Deps } from "./deps";

/** The ledger's answer at create (Quote or Reserve): the figures and the tariff they came from. */
interface Figures {
  commissionAmount: string;
  settlementAmount: string;
  settlementCurrency: string;
  appliedTariff?: TariffFields;
}

const DUPLICATE_POLL_MS = 25;

const TYPES: Partial<Record<OperationType, CreateInput["type"]>> = { [OperationType.PAYMENT]: "payment", [OperationType.PAYOUT]: "payout" };

/** The request as the create rules read it; a type other than payment or payout is refused here. */
function inputOf(req: CreateOperationRequest): CreateInput {
  const type = TYPES[req.type];
  if (!type) throw new AppError("validation_error", "type must be payment or payout", [{ field: "type", issue: "must be PAYMENT or PAYOUT" }]);
  return {
    type,
    merchantOperationId: req.merchantOperationId,
    clientId: req.clientId,
    clientIp: req.clientIp,
    method: req.method,
    amount: req.amount,
    currency: req.currency,
    number: req.number,
    name: req.name,
    bankname: req.bankname,
    wronglyTyped: req.wronglyTypedFields,
  };
}

/**
 * CreateOperation: idempotent by (shop, merchant_operation_id) with a canonical request hash.
 * The first caller claims the key with a `creating` row and routes the operation; concurrent
 * duplicates wait for that row to settle and answer it. A cancel by merchant_operation_id can
 * win while the row is `creating`: the create then ends as that cancelled payment, without details.
 */
export function createOperationHandler(deps: Pick<Deps, "sql" | "peers" | "log" | "keys" | "createDeadlineMs">) {
  const { sql, peers, log, keys } = deps;

  /**
   * Waits while another create holds the key; null once it gave the key back. A create that died
   * mid-flight (still `creating` well past its deadline) is released here, so its retry need not
   * wait for the sweep.
   */
  async function settled(shopId: string, merchantOperationId: string, deadline: number): Promise<OperationRow | null> {
    for (;;) {
      const row = await findOperation(sql, shopId, { merchantOperationId });
      if (!row || row.status !== "creating") return row;
      if (row.createdAt.getTime() < Date.now() - abandonedAfterMs(deps.createDeadlineMs) && (await releaseAbandonedCreate(deps, row.id))) continue;
      if (Date.now() > deadline) throw new AppError("unavailable", "the original request is still being processed; retry");
      await new Promise((r) => setTimeout(r, DUPLICATE_POLL_MS));
    }
  }

  /** The operation a create ended as when its row left `creating` under it (a cancel won, or it was released as abandoned). */
  async function endedAs(id: string): Promise<OperationRow> {
    const row = await findOperationById(sql, id);
    if (!row) throw new AppError("unavailable", "the create ran past its deadline and was given up; retry");
    return row;
  }

  /**
   * A payout's refused reserve as the merchant should hear it: one no route could ever carry is
   * routing's 400 naming the field whatever the balance (funds would not make it go through);
   * otherwise, or when routing cannot say, the ledger's refusal.
   */
  async function reserveRefusal(err: unknown, ask: MessageInitShape<typeof CheckRoutableRequestSchema>): Promise<unknown> {
    if (fromConnectError(err).code !== "insufficient_balance") return err;
    try {
      await peers.routing.checkRoutable(ask);
      return err;
    } catch (check) {
      return fromConnectError(check).code === "validation_error" ? check : err;
    }
  }

  /**
   * Routes a claimed operation and records the outcome; undoes every side effect on failure. Each
   * undo is registered before its call: a call that failed here (timed out) may still be carried
   * out by its service later, and the ledger's and routing's releases leave a tombstone that makes
   * such a late Reserve or Allocate move nothing.
   */
  async function route(row: OperationRow, cmd: CreateCommand, shop: CreateShop, deadline: number): Promise<OperationRow> {
    noteOnSpan({ "pgw.operation_id": row.id });
    const undo: (() => Promise<unknown>)[] = [];
    try {
      let figures: Figures | undefined;
      // A payout's reserve needs the conversion rate before routing: that quote is handed to
      // Allocate, so the reserve, the rate shown and the booking at completion share one quote.
      let fx: FxQuote | undefined;
      if (cmd.type === "payout") {
        if (cmd.currency !== shop.settlementCurrency) {
          fx = (await peers.routing.quoteFx({ currency: cmd.currency, settlementCurrency: shop.settlementCurrency })).fx;
        }
        undo.push(() => peers.ledger.releaseReserve({ operationId: row.id }));
        const ask = { method: cmd.method, amount: cmd.amount, currency: cmd.currency, settlementCurrency: shop.settlementCurrency };
        figures = await peers.ledger.reserve({ ...ask, shopId: shop.id, operationId: row.id, fxRate: fx?.rate, overdraftLimit: shop.overdraftLimit.toFixed(6) }).catch(async (err: unknown) => {
          throw await reserveRefusal(err, { ...ask, type: cmd.type });
        });
      }
      undo.push(() => peers.routing.release({ operationId: row.id, reason: "create failed" }));
      const budgetMs = Math.max(deadline - Date.now(), 0);
      const allocation = await peers.routing.allocate(
        {
          operationId: row.id,
          type: cmd.type,
          method: cmd.method,
          amount: cmd.amount,
          currency: cmd.currency,
          settlementCurrency: shop.settlementCurrency,
          destination: cmd.destination ? { number: cmd.destination.number, name: cmd.destination.name, bankname: cmd.destination.bankname } : undefined,
          clientId: cmd.clientId,
          clientIp: cmd.clientIp,
          budgetMs,
          fx,
        },
        { timeoutMs: budgetMs + 2000 },
      );
      figures ??= await peers.quotePayment({
        shopId: shop.id,
        method: cmd.method,
        amount: cmd.amount,
        currency: cmd.currency,
        settlementCurrency: shop.settlementCurrency,
        fxRate: allocation.fx?.rate,
      });
      return await record(row, allocation, figures, undo);
    } catch (err) {
      for (const step of undo.reverse()) await step().catch((e: unknown) => log.error({ err: e, operation_id: row.id }, "undo after failed create failed"));
      // Gone from `creating` means a cancel won meanwhile: that cancelled payment is the answer.
      if (!(await releaseCreating(sql, row.id))) return endedAs(row.id);
      throw fromConnectError(err);
    }
  }

  /** Stores the route's facts unless a cancel won the race (then the allocation is released). */
  async function record(claimed: OperationRow, allocation: AllocateResponse, figures: Figures, undo: (() => Promise<unknown>)[]): Promise<OperationRow> {
    const next = transition("creating", { kind: "allocated", requiresReceipt: allocation.requiresReceipt });
    if ("refused" in next) throw new Error(`the lifecycle refuses an allocation of a creating operation (${next.refused})`);
    // Only a create moves its row out of `creating`, except a cancel: a compare-and-set needs no
    // lock, and the row and its event go in one statement.
    // The completion settles with this tariff; absent from an older ledger's answer, the
    // completion then asks the ledger's Quote.
    const tariff = tariffOf(figures.appliedTariff);
    const change = {
      status: next.to,
      number: allocation.requisites?.number ? keys.seal(allocation.requisites.number) : undefined,
      holderName: allocation.requisites?.name,
      bankname: allocation.requisites?.bankname,
      requiresReceipt: allocation.requiresReceipt,
      fxSource: allocation.fx?.source,
      fxRate: allocation.fx?.rate,
      settlementCurrency: figures.settlementCurrency,
      settlementAmount: figures.settlementAmount,
      commissionAmount: figures.commissionAmount,
      tariffPercent: tariff?.percent.toFixed(),
      tariffFixed: tariff?.fixed.toFixed(),
      tariffMinimum: tariff?.minimum.toFixed(),
      expiresAt: allocation.expiresAt ? new Date(allocation.expiresAt) : null,
      allocationId: allocation.allocationId,
    };
    const row = await updateOperationFromWithEvent(sql, claimed, "creating", change, (changed) => statusChangedEvent(changed, "creating"));
    if (row) {
      countStatusChange(sql, row, "creating");
      return row;
    }
    for (const step of undo.reverse()) await step().catch((e: unknown) => log.warn({ err: e, operation_id: claimed.id }, "release after cancel failed"));
    return endedAs(claimed.id);
  }

  /** `callTimeoutMs`: what remains of the call's gRPC deadline, if it has one. */
  return async (req: CreateOperationRequest, callTimeoutMs?: number) => {
    const input = inputOf(req);
    const cmd = validateCreate(input);
    const hash = requestHash(input);
    const shopId = requireUuid(req.shopId, "shop_id");
    const deadline = createDeadline(Date.now(), deps.createDeadlineMs, Number(req.respondByUnixMs), callTimeoutMs);
    if (deadline === null) {
      if (!(await findCreateShop(sql, shopId))) throw new AppError("not_found", "shop not found");
      throw new AppError("unavailable", "the caller stopped waiting before this create could start; nothing was created");
    }
    // Sealed at rest: a payout's card number, and the hash, which holds the number (known fields
    // and a card number's few unknown digits would give it away to a search).
    const sealed = { requestHash: keys.seal(hash), destNumber: cmd.destination ? keys.seal(cmd.destination.number) : null };
    // The shop is read by the first claim's statement; a retry (the key's holder was released) claims again.
    const first = await claimInShop(sql, shopId, cmd, sealed);
    const shop = first.shop;
    if (!shop) throw new AppError("not_found", "shop not found");
    for (let claimed = first.claimed; ; claimed = await insertCreating(sql, cmd, shop, sealed)) {
      if (claimed) return { row: await route(claimed, cmd, shop, deadline), shop };
      const existing = await findOperation(sql, shop.id, { merchantOperationId: cmd.merchantOperationId });
      if (existing && keys.read(existing.requestHash) !== hash) {
        throw new AppError("idempotency_conflict", "merchant_operation_id was already used with a different request body");
      }
      const final = existing && (await settled(shop.id, cmd.merchantOperationId, deadline + 5000));
      if (final) return { row: final, shop };
    }
  };
}
