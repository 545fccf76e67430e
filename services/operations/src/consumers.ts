import { fromBinary } from "@bufbuild/protobuf";
import { startConsumer, type Logger, type Stoppable } from "@pgw/kit";
import { ProviderUpdateSchema } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import type { NatsConnection } from "nats";
import { SUBJECTS } from "./events";
import { applyProviderUpdate } from "./handlers/apply-provider-update";
import type { Peers } from "./connectors/peers";
import type { Sql } from "./store";

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
