/**
 * The per-operation targets `pnpm bench` checks (docs/benchmarks.md, Targets): CPU summed over every
 * process of the stack, which holds on any host, and p99 latency at a fixed offered rate on this
 * machine. Each open-loop row is offered exactly its target's rate.
 */
export interface Target {
  /** The path as the verdict table names it. */
  path: string;
  /** Arrivals per second the row is offered. */
  rate: number;
  /** CPU ms per operation over every process, at most; absent where only latency is targeted. */
  cpuMs?: number;
  p99Ms: number;
}

export const TARGETS = {
  create: { path: "create payment", rate: 150, cpuMs: 4, p99Ms: 100 },
  pending: { path: "get_operation_state, pending", rate: 800, cpuMs: 0.8, p99Ms: 25 },
  completed: { path: "get_operation_state, completed", rate: 1000, cpuMs: 0.4, p99Ms: 10 },
  balances: { path: "balances while payouts reserve at 20/s", rate: 800, cpuMs: 0.8, p99Ms: 25 },
  completion: { path: "provider completion → merchant webhook", rate: 100, cpuMs: 8, p99Ms: 500 },
  completionSlow: { path: "provider completion → merchant webhook, at 20/s", rate: 20, p99Ms: 150 },
} as const satisfies Record<string, Target>;

/** What a row measured, as far as a verdict needs it. */
export interface Measured {
  /** Operations answered (or webhooks delivered) per second. */
  perSecond: number;
  p99: number;
  /** CPU ms per operation over the stack's processes (the bench's own left out), absent when not measured. */
  cpuMs?: number;
  /** Requests that did not succeed (non-2xx, errors, webhooks never delivered). */
  failed: number;
}

/**
 * A row falls short of its offered rate when it answered under 97 % of it: an open-loop row's
 * count includes ramp-up and the last requests' flight, which cost a percent or two.
 */
const KEPT_UP = 0.97;

/** Whether `m` meets `t`, and if not, every reason why. */
export function verdict(t: Target, m: Measured): { met: boolean; reasons: string[] } {
  const reasons: string[] = [];
  if (m.perSecond < t.rate * KEPT_UP) reasons.push(`${m.perSecond}/s answered of ${t.rate}/s offered`);
  if (m.failed > 0) reasons.push(`${m.failed} failed`);
  if (!(m.p99 <= t.p99Ms)) reasons.push(`p99 ${m.p99} ms > ${t.p99Ms}`);
  if (t.cpuMs !== undefined && !(m.cpuMs !== undefined && m.cpuMs <= t.cpuMs)) reasons.push(m.cpuMs === undefined ? "CPU not measured" : `CPU ${m.cpuMs.toFixed(2)} ms > ${t.cpuMs}`);
  return { met: reasons.length === 0, reasons };
}

/** The verdict table: one line per target with what was measured. */
export function verdictTable(rows: { target: Target; measured: Measured }[]): string {
  const lines = ["| target | offered | p99 ms (target) | stack CPU ms (target) | verdict |", "|---|---|---|---|---|"];
  for (const { target: t, measured: m } of rows) {
    const { met, reasons } = verdict(t, m);
    const cpu = m.cpuMs === undefined ? "–" : m.cpuMs.toFixed(2);
    lines.push(`| ${t.path} | ${t.rate}/s | ${m.p99} (≤ ${t.p99Ms}) | ${cpu} (${t.cpuMs === undefined ? "–" : `≤ ${t.cpuMs}`}) | ${met ? "met" : `missed: ${reasons.join("; ")}`} |`);
  }
  return lines.join("\n");
}
