import { request } from "./http";

/**
 * The sum of a metric's samples on a health port's `/metrics` whose labels include `labels`, each
 * equal to its string or matching its pattern (0 when there are none).
 */
export async function metricValue(healthPort: number, name: string, labels: Record<string, string | RegExp> = {}): Promise<number> {
  const res = await request(`http://127.0.0.1:${healthPort}/metrics`);
  let sum = 0;
  for (const line of String(res.body).split("\n")) {
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample || sample[1] !== name) continue;
    const present = Object.fromEntries([...(sample[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => (typeof v === "string" ? present[k] === v : v.test(present[k] ?? "")))) sum += Number(sample[3]);
  }
  return sum;
}

/** {@link metricValue} summed over several health ports: every replica of a unit. */
export async function metricTotal(healthPorts: number[], name: string, labels: Record<string, string | RegExp> = {}): Promise<number> {
  const values = await Promise.all(healthPorts.map((port) => metricValue(port, name, labels)));
  return values.reduce((a, b) => a + b, 0);
}
