/**
 * The orphan-reserve sweep: a payout reserve held for no payout is returned to available. It
 * arises when a create failed after its Reserve call gave up and the release it sent was lost too
 * (the create sends the release first, so the ledger's tombstone normally stops a late Reserve),
 * or when an internal caller reserved under the id of a payment. Every `everyMs`, reserves held
 * longer than `ageMs` are looked up at operations; only a NotFound or a payment releases (with an
 * alert), any other answer leaves the reserve for a later pass. Releasing is safe even if the
 * operation turned up later: a payout completed without a held reserve is charged from available
 * (completePayout).
 *
 * A pass looks at up to `MAX_LOOKUPS_PER_PASS` reserves, going on next time from where it stopped,
 * so that any number of payouts legitimately pending for long never hide an orphan behind them.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { type KitLog } from "@pgw/kit/events";
import { runPeriodically, type Stoppable } from "@pgw/kit/runtime";
import { OperationType } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import type { OperationsClient } from "../connectors/operations";
import type { LedgerMetrics } from "../metrics";
import { inTransaction, type Db } from "../store";
import { heldReservesBefore, releaseReserve, type ReserveCursor } from "../store/reserves";

const PAGE = 100;
const MAX_LOOKUPS_PER_PASS = 1000;

export interface OrphanSweepOptions {
  db: Db;
  log: KitLog;
  operations: OperationsClient;
  everyMs: number;
  ageMs: number;
  metrics: Pick<LedgerMetrics, "orphanReservesReleased">;
}

/** Why a held reserve has no payout behind it; null when its payout exists (or operations could not say). */
async function orphanReason(operations: OperationsClient, r: { shopId: string; operationId: string }): Promise<string | null> {
  try {
    const { operation } = await operations.getOperationState({ shopId: r.shopId, ref: { ref: { case: "operationId", value: r.operationId } } });
    // A payout's own status events settle its reserve.
    return operation?.type === OperationType.PAYMENT ? "orphan reserve: the operation is a payment" : null;
  } catch (err) {
    return ConnectError.from(err).code === Code.NotFound ? "orphan reserve: operations has no such operation" : null;
  }
}

/** The sweep's passes, each resolving to how many reserves it released; they share one cursor. */
export function orphanReserveSweep({ db, log, operations, ageMs, metrics }: OrphanSweepOptions): () => Promise<number> {
  let cursor: ReserveCursor | null = null;
  return async () => {
    const before = new Date(Date.now() - ageMs);
    let released = 0;
    for (let looked = 0; looked < MAX_LOOKUPS_PER_PASS; ) {
      const page = await heldReservesBefore(db, before, cursor, PAGE);
      for (const r of page) {
        looked++;
        cursor = r;
        const reason = await orphanReason(operations, r);
        if (!reason) continue;
        if (await inTransaction(db, (tx) => releaseReserve(tx, r.operationId, { reason, actor: "sweep:orphan-reserves" }))) {
          released++;
          metrics.orphanReservesReleased.inc();
          log.error({ alert: "orphan_reserve_released", operation_id: r.operationId, shop_id: r.shopId, reason }, "released a payout reserve with no payout behind it");
        }
      }
      if (page.length < PAGE) {
        cursor = null; // the end: the next pass starts from the oldest again
        break;
      }
    }
    return released;
  };
}

export function startOrphanReserveSweep(opts: OrphanSweepOptions): Stoppable {
  return runPeriodically(orphanReserveSweep(opts), opts.everyMs, (err) => opts.log.warn({ err }, "orphan-reserve sweep failed; retrying at the next pass"));
}
