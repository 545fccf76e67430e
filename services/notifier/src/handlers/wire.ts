/** Storage → wire: deliveries and attempts as the NotifierService answers them. */
import { create } from "@bufbuild/protobuf";

import { AttemptSchema, DeliverySchema, type Delivery } from "@pgw/proto/gen/pgw/notifier/v1/notifier_pb";
import type { DeliveryWithLog } from "../store";

export function deliveryWire(d: DeliveryWithLog): Delivery {
  return create(DeliverySchema, {
    id: d.id,
    webhookId: d.webhookId,
    eventType: d.eventType,
    operationId: d.operationId,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.status === "pending" && d.nextAttemptAt ? d.nextAttemptAt.toISOString() : undefined,
    createdAt: d.createdAt.toISOString(),
    attemptLog: d.attemptLog.map((a) =>
      create(AttemptSchema, {
        number: a.number,
        at: a.at.toISOString(),
        statusCode: a.statusCode ?? 0,
        latencyMs: a.latencyMs,
        responseSnippet: a.responseSnippet,
        error: a.error,
      }),
    ),
  });
}
