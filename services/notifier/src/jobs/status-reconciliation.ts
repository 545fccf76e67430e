/**
 * Reconciliation of the status events (kit `startReconciler`), one for both status durables (they
 * record under one processed_events name): every 5 minutes operations' `ListStatusEvents` is read
 * and what neither consumer handled is replayed through the same handler, so a webhook whose event
 * was lost on the way is still created.
 */
import { operationsStatusEvents, startReconciler, type ConsumerOptions } from "@pgw/kit/events";
import { type GrpcTls } from "@pgw/kit/rpc";
import { type Stoppable } from "@pgw/kit/runtime";
import type { OperationStatusChanged } from "@pgw/proto/gen/pgw/events/v1/events_pb";
import type { Registry } from "prom-client";

export function startStatusReconciliation<P>(statusOptions: ConsumerOptions<OperationStatusChanged, P>, operationsUrl: string, tls: GrpcTls | null, registry?: Registry): Stoppable {
  return startReconciler({ ...statusOptions, source: operationsStatusEvents(operationsUrl, tls, registry) });
}
