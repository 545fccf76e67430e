/**
 * The orphan-reserve sweep: a payout reserve held for an operation that operations does not know
 * is returned to available. It arises when a create failed after its Reserve call gave up and the
 * release it sent was lost too (the create sends the release first, so the ledger's tombstone
 * normally stops a late Reserve). Every `everyMs`, reserves held longer than `ageMs` are looked up
 * at operations; only a NotFound releases (with an alert), any other answer leaves the reserve for
 * the next pass. Releasing is safe even if the operation turned up later: a payout completed
 * without a held reserve is charged from available (completePayout).
 */
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { runPeriodically, type KitLog } from "@pgw/kit";
import type { OperationsService } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";
import { releaseReserve } from "./reserves";
import { heldReservesBefore, inTransaction, type Db } from "./store";

const PAGE = 100;

export interface OrphanSweepOptions {
  db: Db;
  log: KitLog;
  operations: Client<typeof OperationsService>;
  everyMs: number;
  ageMs: number;
}

/** One pass; resolves to how many reserves it released. */
export async function releaseOrphanReserves({ db, log, operations, ageMs }: OrphanSweepOptions): Promise<number> {
  let released = 0;
  for (const r of await heldReservesBefore(db, new Date(Date.now() - ageMs), PAGE)) {
    try {
      await operations.getOperationState({ shopId: r.shopId, ref: { ref: { case: "operationId", value: r.operationId } } });
      continue; // the operation exists: its status events settle the reserve
    } catch (err) {
      if (ConnectError.from(err).code !== Code.NotFound) continue;
    }
    const why = { reason: "orphan reserve: operations has no such operation", actor: "sweep:orphan-reserves" };
    if (await inTransaction(db, (tx) => releaseReserve(tx, r.operationId, why))) {
      released++;
      log.error({ alert: "orphan_reserve_released", operation_id: r.operationId, shop_id: r.shopId }, "released a payout reserve whose operation does not exist");
    }
  }
  return released;
}

export function startOrphanReserveSweep(opts: OrphanSweepOptions) {
  return runPeriodically(() => releaseOrphanReserves(opts), opts.everyMs, (err) => opts.log.warn({ err }, "orphan-reserve sweep failed; retrying at the next pass"));
}
