import { scrapeFamilies, sumSamples } from "./prometheus";

/**
 * The sum of a metric's samples on a health port's `/metrics` whose labels include `labels`, each
 * equal to its string or matching its pattern (0 when there are none).
 */
export async function metricValue(healthPort: number, name: string, labels: Record<string, string | RegExp> = {}): Promise<number> {
  return sumSamples(await scrapeFamilies(healthPort), name, labels);
}

/** {@link metricValue} summed over several health ports: every replica of a unit. */
export async function metricTotal(healthPorts: number[], name: string, labels: Record<string, string | RegExp> = {}): Promise<number> {
  const values = await Promise.all(healthPorts.map((port) => metricValue(port, name, labels)));
  return values.reduce((a, b) => a + b, 0);
}
