/**
 * deploy/observability on its own: the alert rules pass `promtool check rules` and their unit tests
 * (`promtool test rules`), every alert has a severity and a runbook link to a section of
 * docs/operations.md, and the dashboard is well formed. That the units export every metric these
 * use is checked against a running stack in metrics.test.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { promtool } from "./support/promtool";
import { rulesOf } from "./support/observability";

const DIR = path.join(__dirname, "..", "deploy", "observability");
const RUNBOOK = "https://pgw.example/docs/operations.md#";
const rules = rulesOf(fs.readFileSync(path.join(DIR, "prometheus", "alerts.yaml"), "utf8"));
const alerts = rules.filter((r) => r.alert !== undefined);

/** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as dashes. */
function anchorsOf(markdown: string): Set<string> {
  const headings = [...markdown.matchAll(/^#+\s+(.+)$/gm)].map((m) => m[1]);
  return new Set(headings.map((h) => h.trim().toLowerCase().replace(/[^\w\- ]/g, "").replace(/ /g, "-")));
}

describe("the alert rules", () => {
  it("pass promtool check rules", () => {
    expect(promtool(["check", "rules", "prometheus/alerts.yaml"], DIR)).toMatch(/SUCCESS: \d+ rules found/);
  });

  it("fire (and stay quiet) as their promtool unit tests expect", () => {
    expect(promtool(["test", "rules", "prometheus/alerts.test.yaml"], DIR)).toContain("SUCCESS");
  });

  it("each have a severity and a runbook link to their own section of docs/operations.md", () => {
    const anchors = anchorsOf(fs.readFileSync(path.join(__dirname, "..", "docs", "operations.md"), "utf8"));
    expect(alerts.length).toBeGreaterThan(15);
    for (const rule of alerts as { alert: string; labels?: Record<string, string>; annotations?: Record<string, string> }[]) {
      const link = rule.annotations?.runbook_url ?? "";
      expect({ alert: rule.alert, severity: rule.labels?.severity, link }).toEqual({
        alert: rule.alert,
        severity: expect.stringMatching(/^(page|ticket|warning)$/),
        link: RUNBOOK + rule.alert.toLowerCase(),
      });
      expect({ alert: rule.alert, documented: anchors.has(rule.alert.toLowerCase()) }).toEqual({ alert: rule.alert, documented: true });
    }
  });
});

describe("the Grafana dashboard", () => {
  const dashboard = JSON.parse(fs.readFileSync(path.join(DIR, "grafana", "pgw-overview.json"), "utf8"));

  it("has a uid, unique panel ids, and reads every panel from the chosen Prometheus", () => {
    expect(dashboard.uid).toBe("pgw-overview");
    const ids = dashboard.panels.map((p: { id: number }) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const graphs = dashboard.panels.filter((p: { type: string }) => p.type !== "row");
    expect(graphs.length).toBeGreaterThan(20);
    for (const panel of graphs) expect({ panel: panel.title, datasource: panel.datasource.uid, queries: panel.targets.length > 0 }).toEqual({ panel: panel.title, datasource: "${datasource}", queries: true });
  });

  it("has the three sections an on-call reads: API (RED), money flow, queues", () => {
    expect(dashboard.panels.filter((p: { type: string }) => p.type === "row").map((p: { title: string }) => p.title)).toEqual(["API (RED)", "Money flow", "Queues"]);
  });
});
