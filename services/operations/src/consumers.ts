import { fromBinary } from "@bufbuild/protobuf";
import { runPeriodically, startConsumer, type Logger, type Stoppable } from "@pgw/kit";
import { ProviderUpdateSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import type { NatsConnection } from "nats";
import { SUBJECTS } from "./events";
import { applyProviderUpdate } from "./handlers/apply-provider-update";
import type { Peers } from "./peers";
import { abandonedCreates, releaseCreating, type Sql } from "./store";

/**
 * Durable consumer of provider updates (published by routing from verified callbacks). Updates of
 * different operations are applied `concurrency` at once; those of one operation in stream order.
 */
export function consumeProviderUpdates(deps: { nc: NatsConnection; sql: Sql; log: Logger; peers: Peers; concurrency: number }): Promise<Stoppable> {
  return startConsumer({
    nc: deps.nc,
    durable: "operations-provider-updates",
    filterSubject: SUBJECTS.providerUpdate,
    decode: (data) => fromBinary(ProviderUpdateSchema, data),
    db: deps.sql,
    log: deps.log,
    concurrency: deps.concurrency,
    orderKey: (update) => update.operationId.toLowerCase(),
    handle: (tx, update) => applyProviderUpdate(tx, update, deps.peers, deps.log),
  });
}

/**
 * Gives back keys held by creates that died mid-flight (process killed while `creating`): after
 * the create deadline has long passed, the allocation and a payout's reserve are released and the
 * row removed. While the ledger cannot confirm the release the row stays, and the next pass retries.
 */
export function sweepAbandonedCreates(deps: { sql: Sql; log: Logger; peers: Peers; olderThanMs: number }): Stoppable {
  const pass = async () => {
    for (const id of await abandonedCreates(deps.sql, new Date(Date.now() - deps.olderThanMs))) {
      await deps.peers.routing.release({ operationId: id, reason: "abandoned create" }).catch(() => undefined);
      const reserveGone = await deps.peers.ledger.releaseReserve({ operationId: id }).then(
        () => true,
        (err: unknown) => (deps.log.warn({ err, operation_id: id }, "abandoned create: reserve release failed; retrying at the next pass"), false),
      );
      if (reserveGone && (await releaseCreating(deps.sql, id))) deps.log.warn({ operation_id: id }, "abandoned create swept");
    }
  };
  return runPeriodically(pass, 10_000, (err) => deps.log.warn({ err }, "sweep of abandoned creates failed"));
}
