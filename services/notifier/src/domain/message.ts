/**
 * Which status changes become webhooks, and the message body (docs/architecture.md, Webhooks):
 * `{"id", "type": "operation.<status>", "created_at", "data": <operation as get_operation_state>}`.
 */

/** Statuses whose entry fires a webhook: awaiting_confirmation and every terminal status. */
export const WEBHOOK_STATUSES: ReadonlySet<string> = new Set(["awaiting_confirmation", "completed", "cancelled", "declined", "expired"]);

/** The webhook type for entering `status`, or null when that entry fires none. */
export function webhookTypeFor(status: string): string | null {
  return WEBHOOK_STATUSES.has(status) ? `operation.${status}` : null;
}

/** The webhook-id of the message for an event: every copy of the event shares it. */
export function webhookIdFor(eventId: string): string {
  return `msg_${eventId.toLowerCase()}`;
}

/** RFC 3339 (UTC, milliseconds) of `occurredAt` when it is a valid timestamp, else of `fallback`. */
export function rfc3339(occurredAt: string, fallback: Date): string {
  const t = Date.parse(occurredAt);
  return new Date(Number.isNaN(t) ? fallback.getTime() : t).toISOString();
}

/** The exact body that is signed and sent. */
export function webhookBody(id: string, type: string, createdAt: string, data: Record<string, unknown>): string {
  return JSON.stringify({ id, type, created_at: createdAt, data });
}
