/**
 * NATS subjects of the operation status events (stream PGW, payload OperationStatusChanged).
 *
 * operations publishes each status change on `pgw.operation.status_changed.<class>.<status>`, the
 * class being `terminal` or `nonterminal` (docs/architecture.md, Events), so that a consumer
 * receives only the statuses it acts on through one filter subject (NATS 2.9 takes one per
 * consumer): most events are creates entering `pending`, which no consumer of ours reads, and each
 * delivery nobody needs costs a NATS write and an acknowledgement.
 */
const PREFIX = "pgw.operation.status_changed";

/**
 * The public statuses an operation never leaves (docs/api.md, Statuses and transitions), for every
 * unit (the kit re-exports it); operations' lifecycle agrees (its test says so).
 */
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(["completed", "cancelled", "declined", "expired"]);

/** The subject a change into `status` is published on. */
export function statusChangedSubject(status: string): string {
  return `${PREFIX}.${TERMINAL_STATUSES.has(status) ? "terminal" : "nonterminal"}.${status}`;
}

/** Filter subjects of consumers: every change, or the changes into a terminal status. */
export const STATUS_CHANGED_FILTERS = {
  all: `${PREFIX}.>`,
  terminal: `${PREFIX}.terminal.>`,
} as const;

/**
 * What the outbox's replay query matches (operations' ListStatusEvents); a partial index of
 * operations' outbox has the same predicate, which the planner matches only when written as is.
 */
export const STATUS_CHANGED_SUBJECT_LIKE = `${PREFIX.replace(/_/g, "\\_")}.%`;

/**
 * Core NATS, outside the stream (never stored), no payload: the ledger's tariffs may have changed.
 * Each ledger replica sends it when Postgres notifies it of a change to the tariffs table, when it
 * starts listening (changes made meanwhile went unheard) and after each reconnect to NATS (a signal
 * sent meanwhile may be lost); operations drops its copy of the
 * tariffs it was quoted at each one (docs/architecture.md, Creating an operation).
 */
export const TARIFFS_CHANGED_SUBJECT = "pgw_live.ledger.tariffs_changed";
