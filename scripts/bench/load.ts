import autocannon from "autocannon";

export interface LoadResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Requests answered. */
  requests: number;
  /** CPU ms per request, total and per process ({@link cpuPerRequest}), when measured. */
  cpu?: string;
  /** CPU ms per request of the stack's processes alone (the bench's own left out), when measured. */
  stackCpu?: number;
  /** The stack's work per request, by kind ({@link workPerRequest}), when measured. */
  work?: Map<string, string>;
}

/** Runs one autocannon load and answers its throughput and latency percentiles. */
export async function load(name: string, options: autocannon.Options): Promise<LoadResult> {
  const result = await autocannon({ connections: 32, duration: 10, ...options });
  return {
    name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    requests: result.requests.total,
  };
}

/** p-th percentile (0-100) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
