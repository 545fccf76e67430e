import { request } from "./http";

/** The sum of a metric's samples on a health port's `/metrics` whose labels include `labels` (0 when there are none). */
export async function metricValue(healthPort: number, name: string, labels: Record<string, string> = {}): Promise<number> {
  const res = await request(`http://127.0.0.1:${healthPort}/metrics`);
  let sum = 0;
  for (const line of String(res.body).split("\n")) {
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample || sample[1] !== name) continue;
    const present = Object.fromEntries([...(sample[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => present[k] === v)) sum += Number(sample[3]);
  }
  return sum;
}
