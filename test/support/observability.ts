/**
 * What deploy/observability's Prometheus rules and Grafana dashboard ask of the units: the metric
 * names their PromQL expressions read, so a test can check the units export each of them.
 */
import yaml from "js-yaml";

interface RuleFile {
  groups: { name: string; rules: { record?: string; alert?: string; expr: string; annotations?: Record<string, string> }[] }[];
}

// PromQL words that are not metric names (keywords and aggregation modifiers).
const KEYWORDS = new Set(["and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "inf", "nan"]);

/**
 * The metric names an expression reads: label matchers, strings, range and offset durations,
 * grouping clauses and function calls are removed first, so only series selectors remain.
 */
export function metricNamesOf(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, " ")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\$\w+/g, " ");
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][\w:]*(\s*\()?/g)) {
    const [token, call] = [match[0].replace(/\s*\($/, ""), match[1]];
    if (call || KEYWORDS.has(token.toLowerCase()) || /^\d/.test(token)) continue;
    names.add(token);
  }
  return [...names];
}

/** The rules of a Prometheus rule file. */
export function rulesOf(text: string): RuleFile["groups"][number]["rules"] {
  return (yaml.load(text) as RuleFile).groups.flatMap((g) => g.rules);
}

/** The metrics a rule file's expressions read from the units (its own recording rules' outputs left out). */
export function metricsUsedByRules(text: string): string[] {
  const rules = rulesOf(text);
  const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
  return [...new Set(rules.flatMap((r) => metricNamesOf(r.expr)))].filter((name) => !recorded.has(name));
}

/** Every `expr` of a Grafana dashboard's panels and templating queries. */
function dashboardExpressions(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(dashboardExpressions);
  if (node === null || typeof node !== "object") return [];
  return Object.entries(node).flatMap(([key, value]) => (key === "expr" && typeof value === "string" ? [value] : dashboardExpressions(value)));
}

/** The metrics a Grafana dashboard's queries read (recording rules of the rule file count as theirs: see metricsUsedByRules). */
export function metricsUsedByDashboard(json: string): string[] {
  return [...new Set(dashboardExpressions(JSON.parse(json)).flatMap(metricNamesOf))];
}
