import { TERMINAL_STATUSES } from "@pgw/contracts";
import type { Operation, OperationRef } from "@pgw/proto/gen/pgw/operations/v1/operations_pb";

/**
 * Operations in a terminal status, as operations answered them to this gateway. A terminal
 * operation never changes, so a later get_operation_state of it needs no call to operations.
 * Entries are per shop: a shop finds only operations it read itself, by operation_id or by
 * merchant_operation_id. Each operation takes two entries (one per identifier); beyond
 * `maxEntries` the least recently read entry goes first. An operation whose merchant_operation_id
 * is longer than `maxKeyLength` is not kept: keys may be as long as a request body (64 KiB), and
 * 40,000 such entries would hold gigabytes.
 */
export class TerminalOperations {
  private readonly kept = new Map<string, Operation>();

  constructor(
    private readonly maxEntries = 40_000,
    private readonly maxKeyLength = 1024,
  ) {}

  /** The kept operation `ref` names for `shopId`, if any. */
  find(shopId: string, ref: OperationRef["ref"]): Operation | undefined {
    if (ref.case === undefined) return undefined;
    const key = keyOf(shopId, ref.case, ref.value);
    const op = this.kept.get(key);
    if (op) {
      this.kept.delete(key);
      this.kept.set(key, op); // most recently read last
    }
    return op;
  }

  /** Keeps `op` under both of its identifiers when it is terminal; anything else is left alone. */
  keep(shopId: string, op: Operation): void {
    if (!TERMINAL_STATUSES.has(op.status) || op.merchantOperationId.length > this.maxKeyLength) return;
    for (const key of [keyOf(shopId, "operationId", op.operationId), keyOf(shopId, "merchantOperationId", op.merchantOperationId)]) {
      this.kept.delete(key);
      if (this.kept.size >= this.maxEntries) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(key, op);
    }
  }
}

const keyOf = (shopId: string, kind: NonNullable<OperationRef["ref"]["case"]>, value: string) => `${shopId}\n${kind}\n${value}`;
