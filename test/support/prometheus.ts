import { request } from "./http";

/** One metric family of a Prometheus text exposition: its TYPE and its samples. */
export interface MetricFamily {
  name: string;
  type: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

/** The families a health port's `/metrics` exposes, by name. */
export async function scrapeFamilies(port: number): Promise<Map<string, MetricFamily>> {
  const res = await request(`http://127.0.0.1:${port}/metrics`);
  if (res.status !== 200) throw new Error(`GET :${port}/metrics answered ${res.status}`);
  return parseExposition(String(res.body));
}

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/;
const SUFFIXES = ["_bucket", "_count", "_sum"];

/** Parses Prometheus' text format (as prom-client writes it: one TYPE line before a family's samples). */
export function parseExposition(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) families.set(type[1], { name: type[1], type: type[2], samples: [] });
    const sample = SAMPLE.exec(line);
    if (!sample) continue;
    const family = families.get(sample[1]) ?? families.get(familyOf(sample[1]));
    const labels = Object.fromEntries([...(sample[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    family?.samples.push({ name: sample[1], labels, value: Number(sample[3]) });
  }
  return families;
}

/**
 * The sum of `series`' samples whose labels include `labels`, each equal to its string or matching
 * its pattern (0 when there are none).
 */
export function sumSamples(families: Map<string, MetricFamily>, series: string, labels: Record<string, string | RegExp> = {}): number {
  const family = families.get(series) ?? families.get(familyOf(series));
  const matches = (value: string | undefined, wanted: string | RegExp) => (typeof wanted === "string" ? value === wanted : wanted.test(value ?? ""));
  return (family?.samples ?? []).filter((s) => s.name === series && Object.entries(labels).every(([k, v]) => matches(s.labels[k], v))).reduce((sum, s) => sum + s.value, 0);
}

/** The family a series belongs to: a histogram's `_bucket`, `_count` and `_sum` series belong to the histogram. */
export function familyOf(series: string): string {
  const suffix = SUFFIXES.find((s) => series.endsWith(s));
  return suffix ? series.slice(0, -suffix.length) : series;
}
