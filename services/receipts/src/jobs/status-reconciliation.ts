import { startReconciler, type EventSource } from "@pgw/kit/events";
import { type ServiceDeps, type Stoppable } from "@pgw/kit/runtime";
import { statusConsumerOptions } from "../events";
import type { ReceiptsDeps } from "../handlers/deps";
import type { DB, Db } from "../store";

/**
 * Every 5 minutes, operations' record of status events (ListStatusEvents, `source`) replayed
 * through the live consumer's handler under the same processed-events name: a completed
 * operation whose event JetStream lost gets its evidence too (docs/architecture.md, Reconciliation).
 */
export function startStatusReconciliation(deps: ReceiptsDeps & { nc: ServiceDeps<Db, DB>["nc"] }, source: EventSource): Stoppable {
  return startReconciler({ ...statusConsumerOptions(deps), source });
}
