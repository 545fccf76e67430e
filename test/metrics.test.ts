/**
 * A running stack's metrics: after a payment and a payout went through, every unit's /metrics shows
 * the families operators watch (docs/operations.md, Metrics), each of the right type and within
 * Prometheus' conventions; and every metric an alert rule or the dashboard in deploy/observability
 * uses is among them.
 */
import fs from "node:fs";
import path from "node:path";
import { merchantClient, newMoid, sandboxControl } from "./support/merchant";
import { pollUntil } from "./support/poll";
import { scrapeFamilies, sumSamples, type MetricFamily } from "./support/prometheus";
import { metricsUsedByDashboard, metricsUsedByRules } from "./support/observability";
import { admin, createShopWithKey, startStack, type Stack } from "./support/stack";

let stack: Stack;
/** Every unit's families, by unit, scraped once the flows below are done. */
const scraped = new Map<string, Map<string, MetricFamily>>();

/** The families each unit must expose, with their type. */
const KIT_SERVICE: Record<string, string> = {
  grpc_server_handling_seconds: "histogram",
  unit_ready: "gauge",
  unit_readiness_check_failing: "gauge",
  outbox_pending_events: "gauge",
  outbox_oldest_pending_age_seconds: "gauge",
  outbox_publish_failures_total: "counter",
  outbox_events_published_total: "counter",
  events_consumed_total: "counter",
  db_statements_total: "counter",
  db_transactions_total: "counter",
  jetstream_consumer_pending_messages: "gauge",
  jetstream_consumer_ack_pending_messages: "gauge",
  jetstream_consumer_redelivered_messages: "gauge",
  reconciliation_passes_total: "counter",
  reconciliation_events_applied_total: "counter",
};
const CALLS_PEERS = { grpc_client_handling_seconds: "histogram" };
const EXPECTED: Record<string, Record<string, string>> = {
  gateway: {
    http_requests_total: "counter",
    http_request_duration_seconds: "histogram",
    gateway_rate_limited_requests_total: "counter",
    gateway_auth_refusals_total: "counter",
    unit_ready: "gauge",
    ...CALLS_PEERS,
  },
  operations: {
    ...KIT_SERVICE,
    ...CALLS_PEERS,
    operations_created_total: "counter",
    operations_terminal_total: "counter",
    operations_late_funds_opened_total: "counter",
    operations_manual_check: "gauge",
    operations_late_funds_open: "gauge",
  },
  routing: { ...KIT_SERVICE, routing_provider_requests_total: "counter", routing_provider_request_duration_seconds: "histogram" },
  ledger: {
    ...KIT_SERVICE,
    ...CALLS_PEERS,
    ledger_journal_entries_total: "counter",
    ledger_reserves_held: "gauge",
    ledger_inconsistencies_total: "counter",
    ledger_orphan_reserves_released_total: "counter",
  },
  receipts: { ...KIT_SERVICE, ...CALLS_PEERS },
  notifier: {
    ...KIT_SERVICE,
    ...CALLS_PEERS,
    notifier_webhook_deliveries_total: "counter",
    notifier_webhook_attempts_total: "counter",
    notifier_webhook_backlog: "gauge",
    notifier_webhook_oldest_pending_age_seconds: "gauge",
  },
};

// Node's own metrics (prom-client's defaults) keep their established names.
const DEFAULT_METRICS = /^(process|nodejs)_/;
// A label that would name one thing among unboundedly many.
const ID_LABEL = /(^|_)(id|ids|uuid|shop|merchant|operation|path|url|key|email|number)$/;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
// More series than this in one family means a label is not bounded.
const MAX_SERIES = 60;

/** The value of `name`'s samples whose labels include `labels`, in `unit`'s scrape. */
function sampleSum(unit: string, name: string, labels: Record<string, string>): number {
  return sumSamples(scraped.get(unit)!, name, labels);
}

beforeAll(async () => {
  stack = await startStack();
  const shop = await createShopWithKey(stack);
  const m = merchantClient(stack, shop.apiKey);
  const sandbox = sandboxControl(stack);
  const payment = await m.payment({ merchant_operation_id: newMoid("pay"), client_id: "c-1", method: "WT_RUB_C2C", amount: "150.00", currency: "RUB" });
  expect(payment.status).toBe(200);
  expect((await sandbox.pay(payment.body.operation_id, { amount: "150.00" })).status).toBe(200);
  expect((await m.waitForStatus(payment.body.operation_id, "completed")).body.status).toBe("completed");
  expect((await admin(stack, "POST", `/admin/api/shops/${shop.shopId}/adjustments`, { currency: "RUB", amount: "500.00", reason: "prefunding" })).status).toBe(201);
  const payout = await m.payout({ merchant_operation_id: newMoid("out"), client_id: "c-1", method: "WT_RUB_C2C", amount: "100.00", currency: "RUB", number: "4111111111111111" });
  expect(payout.status).toBe(200);
  expect((await sandbox.settle(payout.body.operation_id)).status).toBe(200);
  expect((await m.waitForStatus(payout.body.operation_id, "completed")).body.status).toBe("completed");
  // A refused request, so the public API's 4xx series exists too.
  expect((await m.post("/v1/payment", { amount: "x" })).status).toBe(400);
  const ports: Record<string, number> = { gateway: stack.gateway.healthPort, ...Object.fromEntries(Object.entries(stack.services).map(([unit, s]) => [unit, s.healthPort])) };
  // The ledger books both completions from their status events: wait for the entries, then scrape everything.
  const booked = (f: Map<string, MetricFamily>, kind: string) => (f.get("ledger_journal_entries_total")?.samples ?? []).some((s) => s.labels.kind === kind && s.value >= 1);
  await pollUntil(() => scrapeFamilies(ports.ledger), (f) => booked(f, "payment_completed") && booked(f, "payout_completed"), 10_000);
  for (const [unit, port] of Object.entries(ports)) scraped.set(unit, await scrapeFamilies(port));
}, 120_000);
afterAll(() => stack?.stop());

describe("every unit's /metrics", () => {
  it.each(Object.keys(EXPECTED))("%s exposes its families with the right types", (unit) => {
    const families = scraped.get(unit)!;
    const found = Object.fromEntries(Object.keys(EXPECTED[unit]).map((name) => [name, families.get(name)?.type ?? "missing"]));
    expect(found).toEqual(EXPECTED[unit]);
  });

  it.each(Object.keys(EXPECTED))("%s follows Prometheus' conventions: _total only on counters, seconds for time, bounded labels without ids", (unit) => {
    const problems: string[] = [];
    for (const family of scraped.get(unit)!.values()) {
      if (DEFAULT_METRICS.test(family.name)) continue;
      const { name, type } = family;
      if (!/^[a-z][a-z0-9_]*$/.test(name)) problems.push(`${name}: not snake_case`);
      if ((type === "counter") !== name.endsWith("_total")) problems.push(`${name}: a ${type} ${type === "counter" ? "must" : "must not"} end in _total`);
      if (type === "histogram" && !name.endsWith("_seconds")) problems.push(`${name}: histograms here measure time, in seconds`);
      if (/(^|_)(duration|latency|age|time)(_|$)/.test(name) && !/_seconds(_total)?$/.test(name)) problems.push(`${name}: a time must be in seconds`);
      const series = new Set(family.samples.map((s) => JSON.stringify({ ...s.labels, le: undefined })));
      if (series.size > MAX_SERIES) problems.push(`${name}: ${series.size} series`);
      for (const sample of family.samples) {
        for (const [label, value] of Object.entries(sample.labels)) {
          if (ID_LABEL.test(label)) problems.push(`${name}: label ${label} names one thing among many`);
          if (UUID.test(value)) problems.push(`${name}: label ${label} holds an id (${value})`);
        }
      }
    }
    expect([...new Set(problems)]).toEqual([]);
  });
});

describe("what the payment and the payout left in the metrics", () => {
  it("counts the public requests by route template, method and status class", () => {
    expect(sampleSum("gateway", "http_requests_total", { server: "public", route: "/v1/payment", method: "POST", status_class: "2xx" })).toBeGreaterThanOrEqual(1);
    expect(sampleSum("gateway", "http_requests_total", { server: "public", route: "/v1/payment", method: "POST", status_class: "4xx" })).toBeGreaterThanOrEqual(1);
    expect(sampleSum("gateway", "http_request_duration_seconds_count", { server: "public", route: "/v1/payout", method: "POST" })).toBeGreaterThanOrEqual(1);
    expect(sampleSum("gateway", "http_requests_total", { server: "admin", method: "POST", status_class: "2xx" })).toBeGreaterThanOrEqual(4);
  });

  it("times the RPCs on both sides", () => {
    expect(sampleSum("gateway", "grpc_client_handling_seconds_count", { method: "pgw.operations.v1.OperationsService/CreateOperation", code: "ok" })).toBe(2);
    expect(sampleSum("operations", "grpc_server_handling_seconds_count", { method: "pgw.operations.v1.OperationsService/CreateOperation", code: "ok" })).toBe(2);
    expect(sampleSum("operations", "grpc_client_handling_seconds_count", { method: "pgw.routing.v1.RoutingService/Allocate", code: "ok" })).toBe(2);
  });

  it("counts the operations created and completed, the journal entries and the provider calls", () => {
    for (const type of ["payment", "payout"]) {
      expect({ type, created: sampleSum("operations", "operations_created_total", { type }) }).toEqual({ type, created: 1 });
      expect({ type, completed: sampleSum("operations", "operations_terminal_total", { type, status: "completed" }) }).toEqual({ type, completed: 1 });
    }
    for (const kind of ["adjustment", "payment_completed", "reserve", "payout_completed"]) {
      expect({ kind, entries: sampleSum("ledger", "ledger_journal_entries_total", { kind }) }).toEqual({ kind, entries: 1 });
    }
    expect(sampleSum("ledger", "ledger_reserves_held", {})).toBe(0);
    expect(sampleSum("routing", "routing_provider_requests_total", { call: "createPayin", outcome: "ok" })).toBe(1);
    expect(sampleSum("routing", "routing_provider_requests_total", { call: "createPayout", outcome: "ok" })).toBe(1);
  });

  it("counts the work behind them: transactions, statements, events published and consumed", () => {
    // The ledger books the two completions from their terminal status events.
    expect(sampleSum("ledger", "events_consumed_total", { consumer: "ledger-status", outcome: "handled" })).toBe(2);
    // pending and completed of each, at least.
    expect(sampleSum("operations", "outbox_events_published_total", {})).toBeGreaterThanOrEqual(4);
    for (const unit of ["operations", "routing", "ledger", "receipts", "notifier"]) {
      const committed = sampleSum(unit, "db_transactions_total", { outcome: "committed" });
      const statements = sampleSum(unit, "db_statements_total", {});
      expect({ unit, committed: committed > 0, statementsBeyondTransactions: statements > 2 * committed }).toEqual({ unit, committed: true, statementsBeyondTransactions: true });
    }
  });

  it("shows every unit ready, its outbox drained and each durable's lag", () => {
    for (const unit of Object.keys(EXPECTED)) expect({ unit, ready: sampleSum(unit, "unit_ready", {}) }).toEqual({ unit, ready: 1 });
    const consumers = scraped.get("ledger")!.get("jetstream_consumer_pending_messages")!.samples.map((s) => s.labels.consumer);
    expect(consumers).toEqual(["ledger-status"]);
  });
});

describe("deploy/observability", () => {
  const exported = () => new Set([...scraped.values()].flatMap((families) => [...families.values()].flatMap((f) => [f.name, ...f.samples.map((s) => s.name)])));
  // Prometheus writes `up` itself for every target it scrapes.
  const fromPrometheus = new Set(["up"]);

  it("every metric the alert rules use is exported by a running stack", () => {
    const used = metricsUsedByRules(fs.readFileSync(path.join(__dirname, "..", "deploy", "observability", "prometheus", "alerts.yaml"), "utf8"));
    expect(used.length).toBeGreaterThan(10);
    const have = exported();
    expect(used.filter((name) => !have.has(name) && !fromPrometheus.has(name))).toEqual([]);
  });

  it("every metric the Grafana dashboard uses is exported by a running stack", () => {
    const used = metricsUsedByDashboard(fs.readFileSync(path.join(__dirname, "..", "deploy", "observability", "grafana", "pgw-overview.json"), "utf8"));
    expect(used.length).toBeGreaterThan(10);
    const have = exported();
    expect(used.filter((name) => !have.has(name) && !fromPrometheus.has(name))).toEqual([]);
  });
});
