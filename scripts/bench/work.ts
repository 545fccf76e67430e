/**
 * Where a benchmark row's work went, per request: each service's transactions and statements, the
 * RPCs by method, the events published and the deliveries each consumer settled, provider calls and
 * webhook attempts. Read from every service's `/metrics` before and after the row (the counters of
 * docs/operations.md, Metrics), so background work during the row (relay passes, sweeps, scrapes)
 * counts in it too, as in the CPU figures.
 */
import { resolveUnitPorts, UNITS } from "../../deploy/local/src/units";
import { parseExposition } from "../../test/support/prometheus";

/** Counter totals so far, by "<kind>\t<part>" (kind: one column of the breakdown). */
export type WorkSnapshot = Map<string, number>;

type Labels = Record<string, string>;

/** The counters read, each sample counted as the (kind, part) pairs of the breakdown it names. */
const COUNTED: Record<string, (unit: string, labels: Labels) => [string, string][]> = {
  db_transactions_total: (unit, l) => (l.outcome === "committed" ? [["transactions", unit]] : []),
  // A statement outside a transaction is a transaction of its own (autocommit).
  db_statements_total: (unit, l) => (l.in_transaction === "false" ? [["statements", unit], ["transactions", unit]] : [["statements", unit]]),
  // The server side only: each call counted once, by the unit that answered it.
  grpc_server_handling_seconds_count: (_, l) => (l.method.startsWith("grpc.") ? [] : [["RPCs", l.method.split(".").pop()!]]),
  outbox_events_published_total: (unit) => [["events published", unit]],
  events_consumed_total: (_, l) => [["deliveries", l.consumer]],
  routing_provider_requests_total: (_, l) => [["provider calls", l.call]],
  notifier_webhook_attempts_total: () => [["webhook attempts", "notifier"]],
};
export const WORK_KINDS = ["transactions", "statements", "RPCs", "events published", "deliveries", "provider calls", "webhook attempts"] as const;

/** Every service's counters now (a unit that does not answer is left out). */
export async function workSnapshot(): Promise<WorkSnapshot> {
  const ports = resolveUnitPorts(process.env);
  const snapshot: WorkSnapshot = new Map();
  await Promise.all(
    UNITS.filter((u) => u.kind === "service" && "HEALTH_PORT" in u.ports).map(async ({ name }) => {
      const res = await fetch(`http://127.0.0.1:${ports[name].HEALTH_PORT}/metrics`).catch(() => undefined);
      if (!res?.ok) return;
      for (const family of parseExposition(await res.text()).values()) {
        for (const sample of family.samples) {
          for (const at of COUNTED[sample.name]?.(name, sample.labels) ?? []) snapshot.set(at.join("\t"), (snapshot.get(at.join("\t")) ?? 0) + sample.value);
        }
      }
    }),
  );
  return snapshot;
}

/** Per kind, "3.00 (operations 2.00, ledger 1.00)": each part's count per request, largest first. */
export function workPerRequest(before: WorkSnapshot, after: WorkSnapshot, requests: number): Map<string, string> {
  const parts = new Map<string, [string, number][]>();
  for (const [key, total] of after) {
    const perRequest = (total - (before.get(key) ?? 0)) / Math.max(requests, 1);
    if (perRequest < 0.005) continue;
    const [kind, part] = key.split("\t");
    parts.set(kind, [...(parts.get(kind) ?? []), [part, perRequest]]);
  }
  const work = new Map<string, string>();
  for (const kind of WORK_KINDS) {
    const shares = (parts.get(kind) ?? []).sort((a, b) => b[1] - a[1]);
    const sum = shares.reduce((s, [, n]) => s + n, 0);
    work.set(kind, shares.length ? `${sum.toFixed(2)} (${shares.map(([part, n]) => `${part} ${n.toFixed(2)}`).join(", ")})` : "–");
  }
  return work;
}
