/**
 * Reconciliation of the status consumer (kit `startReconciler`): every 5 minutes, the status
 * events operations recorded (ListStatusEvents) are replayed through the consumer's own handler,
 * so an event JetStream lost is still booked; the first pass of a process looks back 24 h, later
 * ones start where the last complete pass stopped. processed_events and the entries' unique
 * sources make a replay of a booked event a no-op.
 */
import { startReconciler, type ConsumerOptions, type EventSource } from "@pgw/kit/events";
import { type Stoppable } from "@pgw/kit/runtime";
import type { PlannedStatusChange } from "../events";

export function startStatusReconciler(consumer: ConsumerOptions<PlannedStatusChange>, source: EventSource): Stoppable {
  return startReconciler({ ...consumer, source });
}
