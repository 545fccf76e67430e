/**
 * Trace context across NATS: an outbox row keeps the `traceparent` of the transaction that wrote it
 * (outbox.ts), the relay sends it as a message header however late it publishes, and a consumer
 * handles the message in a span that continues it. An event written with no span current (tracing
 * off, a sweep) carries no header and its consumer opens no span.
 */
import { headers as natsHeaders, type JsMsg, type MsgHdrs } from "nats";
import { continuingTrace, SpanKind, TRACEPARENT } from "../runtime/tracing";

/** Headers of an event besides its id (`msgID`): the trace context it was written in, when it has one. */
export function eventHeaders(traceparent: string | null | undefined): MsgHdrs | undefined {
  if (!traceparent) return undefined;
  const h = natsHeaders();
  h.set(TRACEPARENT, traceparent);
  return h;
}

/** Runs a consumer's handling of `m` in a span continuing the trace the event was written in (none without a `traceparent`). */
export function handlingInTrace<T>(m: JsMsg, durable: string, fn: () => Promise<T>): Promise<T> {
  return continuingTrace(m.headers?.get(TRACEPARENT), `${m.subject} process`, {
    kind: SpanKind.CONSUMER,
    attributes: { "messaging.system": "nats", "messaging.operation.type": "process", "messaging.destination.name": m.subject, "messaging.consumer.group.name": durable },
  }, fn);
}
