/**
 * Tracing as the image runs it: a unit's bundle started with `--require services/kit/dist/tracing.js`
 * and OTEL_EXPORTER_OTLP_ENDPOINT exports its spans by OTLP, named after the unit, with the HTTP
 * server's span and the Postgres statements under it (the bundle's `pg` is the one the
 * instrumentation patched). A stand-in collector takes them as OTLP JSON.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePortsForLater, readinessUrl, resolveUnitPorts, UNITS, unitEnvironment, portOverrideVariable } from "../deploy/local/src";
import { buildTracingEntry, buildUnit, unitDir } from "../scripts/build-units";
import { databaseServerUrl, dropDatabases, natsUrl, uniqueDatabaseUrl } from "./support/infra";
import { pollUntil } from "./support/poll";

const ROOT = path.join(__dirname, "..");
const image = mkdtempSync(path.join(tmpdir(), "pgw-traced-"));
const sandbox = UNITS.find((u) => u.name === "provider-sandbox")!;
const database = uniqueDatabaseUrl("sandbox");
/** Every span the collector received: its unit (service.name), name, kind and attribute keys and values. */
const received: { unit: string; name: string; kind: number; traceId: string; attributes: Record<string, unknown> }[] = [];
let collector: http.Server;
let child: ChildProcess | undefined;

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
const valueOf = (v: OtlpValue) => v.stringValue ?? v.intValue ?? v.boolValue;

beforeAll(async () => {
  collector = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c)).on("end", () => {
      for (const rs of JSON.parse(body).resourceSpans ?? []) {
        const unit = rs.resource.attributes.find((a: { key: string }) => a.key === "service.name")?.value.stringValue;
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans) {
            const attributes = Object.fromEntries(s.attributes.map((a: { key: string; value: OtlpValue }) => [a.key, valueOf(a.value)]));
            received.push({ unit, name: s.name, kind: s.kind, traceId: s.traceId, attributes });
          }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  const dir = unitDir(sandbox.entry);
  const tracingEntry = await buildTracingEntry();
  await buildUnit(sandbox, path.join(image, dir, "dist"));
  cpSync(tracingEntry, path.join(image, "tracing.js"));
  cpSync(path.join(ROOT, dir, "prisma"), path.join(image, dir, "prisma"), { recursive: true });
  const [port] = await freePortsForLater(1);
  const ports = resolveUnitPorts({ [portOverrideVariable("provider-sandbox", "HTTP_PORT")]: String(port) });
  const env = unitEnvironment(sandbox, {
    databaseServerUrl: databaseServerUrl(),
    natsUrl: natsUrl(),
    ports,
    baseEnv: {
      PATH: process.env.PATH,
      LOG_LEVEL: "warn",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    },
  });
  env.DATABASE_URL = database;
  child = spawn(process.execPath, ["--require", "./tracing.js", path.join(dir, "dist", "main.js")], { cwd: image, env, stdio: "ignore" });
  const ready = await pollUntil(() => fetch(readinessUrl(sandbox, ports)).then((r) => r.status, () => 0), (status) => status === 204, 60_000, 200);
  expect(ready).toBe(204);
  const scenario = await fetch(`http://127.0.0.1:${port}/control/scenario`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ method: "WT_RUB_C2C", accept: "reject" }) });
  expect(scenario.ok).toBe(true);
}, 120_000);

afterAll(async () => {
  child?.kill("SIGKILL");
  collector?.close();
  await dropDatabases([database]);
  rmSync(image, { recursive: true, force: true });
});

test("a bundled unit started with the tracing entry exports its HTTP and Postgres spans by OTLP", async () => {
  const request = await pollUntil(
    () => received.find((s) => s.kind === 2 && s.attributes["http.request.method"] === "PUT" && s.attributes["url.path"] === "/control/scenario"),
    (span) => span !== undefined,
    10_000,
  );
  expect(request).toMatchObject({ unit: "provider-sandbox" });
  const statements = await pollUntil(
    () => received.filter((s) => s.traceId === request!.traceId && (s.attributes["db.system.name"] ?? s.attributes["db.system"]) === "postgresql"),
    (spans) => spans.length > 0,
    10_000,
  );
  expect(statements.length).toBeGreaterThan(0);
  // Probes are not traced: the readiness polls above left no span.
  expect(received.filter((s) => String(s.attributes["url.path"] ?? "").endsWith("readyz"))).toEqual([]);
}, 30_000);
