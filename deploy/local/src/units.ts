import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { spawn, type ChildProcess } from "node:child_process";

export type UnitName = "operations" | "routing" | "ledger" | "receipts" | "notifier" | "provider-sandbox" | "gateway";

export interface UnitSpec {
  name: UnitName;
  /** Entry file, relative to the repository root. */
  entry: string;
  /** The unit's own database on the shared server; the gateway has none. */
  database?: string;
  /** Port variables the unit reads, with the local default of each. */
  ports: Readonly<Record<string, number>>;
  /** Which of `ports` serves GET /readyz. */
  readinessPort: string;
  /** Services start first (in parallel), the gateway last. */
  kind: "service" | "gateway";
}

/** Every unit `start` runs, services first, gateway last. */
export const UNITS: readonly UnitSpec[] = [
  {
    name: "operations",
    entry: "services/operations/src/main.ts",
    database: "pgw_operations",
    ports: { GRPC_PORT: 50051, HEALTH_PORT: 9091 },
    readinessPort: "HEALTH_PORT",
    kind: "service",
  },
  {
    name: "routing",
    entry: "services/routing/src/main.ts",
    database: "pgw_routing",
    ports: { GRPC_PORT: 50052, HEALTH_PORT: 9092 },
    readinessPort: "HEALTH_PORT",
    kind: "service",
  },
  {
    name: "ledger",
    entry: "services/ledger/src/main.ts",
    database: "pgw_ledger",
    ports: { GRPC_PORT: 50053, HEALTH_PORT: 9093 },
    readinessPort: "HEALTH_PORT",
    kind: "service",
  },
  {
    name: "receipts",
    entry: "services/receipts/src/main.ts",
    database: "pgw_receipts",
    ports: { GRPC_PORT: 50054, HEALTH_PORT: 9094 },
    readinessPort: "HEALTH_PORT",
    kind: "service",
  },
  {
    name: "notifier",
    entry: "services/notifier/src/main.ts",
    database: "pgw_notifier",
    ports: { GRPC_PORT: 50055, HEALTH_PORT: 9095 },
    readinessPort: "HEALTH_PORT",
    kind: "service",
  },
  {
    name: "provider-sandbox",
    entry: "services/provider-sandbox/src/main.ts",
    database: "pgw_sandbox",
    ports: { HTTP_PORT: 8090 },
    readinessPort: "HTTP_PORT",
    kind: "service",
  },
  {
    name: "gateway",
    entry: "gateway/src/main.ts",
    ports: { HTTP_PORT: 8080, ADMIN_PORT: 8081, HEALTH_PORT: 9090 },
    readinessPort: "HEALTH_PORT",
    kind: "gateway",
  },
];

/** Port variables a unit reads; the launcher sets them per unit, so generic values in its own environment are not passed on. */
const PER_UNIT_VARIABLES = ["GRPC_PORT", "HEALTH_PORT", "HTTP_PORT", "ADMIN_PORT"];

/** Admin token in local mode when ADMIN_TOKEN is not set. */
export const DEFAULT_ADMIN_TOKEN = "dev-admin-token";

export type UnitPorts = Readonly<Record<UnitName, Readonly<Record<string, number>>>>;

/** `provider-sandbox` + `HTTP_PORT` → `PROVIDER_SANDBOX_HTTP_PORT`: the variable that overrides one unit's port. */
export function portOverrideVariable(unit: UnitName, variable: string): string {
  return `${unit.toUpperCase().replace(/-/g, "_")}_${variable}`;
}

/**
 * Every unit's ports: the defaults above, each overridable through the launcher's environment with
 * the unit-prefixed variable (GATEWAY_HTTP_PORT=18080, OPERATIONS_GRPC_PORT=50061, ...).
 */
export function resolveUnitPorts(env: NodeJS.ProcessEnv = process.env): UnitPorts {
  const result = {} as Record<UnitName, Record<string, number>>;
  // Which variable took each port: two units on one port would fail only once the second listens.
  const takenBy = new Map<number, string>();
  for (const unit of UNITS) {
    const ports: Record<string, number> = {};
    for (const [variable, fallback] of Object.entries(unit.ports)) {
      const name = portOverrideVariable(unit.name, variable);
      const raw = env[name];
      const port = raw === undefined || raw === "" ? fallback : Number(raw);
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`invalid configuration: ${name} must be a port number (got ${JSON.stringify(raw)})`);
      const other = takenBy.get(port);
      if (other) throw new Error(`invalid configuration: ${name} and ${other} are both port ${port}; give each unit port its own`);
      takenBy.set(port, name);
      ports[variable] = port;
    }
    result[unit.name] = ports;
  }
  return result;
}

/** The URLs units use to reach each other, and the public ones. */
export interface LocalUrls {
  OPERATIONS_URL: string;
  ROUTING_URL: string;
  LEDGER_URL: string;
  RECEIPTS_URL: string;
  NOTIFIER_URL: string;
  SANDBOX_URL: string;
  PUBLIC_BASE_URL: string;
  PAYMENT_PAGE_HOST: string;
  /** Admin port base (the admin API is under /admin/api, the console under /admin). */
  ADMIN_BASE_URL: string;
}

export function localUrls(ports: UnitPorts): LocalUrls {
  const at = (port: number) => `http://127.0.0.1:${port}`;
  const publicBase = at(ports.gateway.HTTP_PORT);
  return {
    OPERATIONS_URL: at(ports.operations.GRPC_PORT),
    ROUTING_URL: at(ports.routing.GRPC_PORT),
    LEDGER_URL: at(ports.ledger.GRPC_PORT),
    RECEIPTS_URL: at(ports.receipts.GRPC_PORT),
    NOTIFIER_URL: at(ports.notifier.GRPC_PORT),
    SANDBOX_URL: at(ports["provider-sandbox"].HTTP_PORT),
    PUBLIC_BASE_URL: publicBase,
    PAYMENT_PAGE_HOST: `${publicBase}/pay`,
    ADMIN_BASE_URL: at(ports.gateway.ADMIN_PORT),
  };
}

/** The readiness probe of a unit: GET → 204 when it is ready. */
export function readinessUrl(unit: UnitSpec, ports: UnitPorts): string {
  return `http://127.0.0.1:${ports[unit.name][unit.readinessPort]}/readyz`;
}

/** A server URL pointing at another database on the same server (query parameters such as sslmode are kept). */
export function databaseUrlFor(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

/** ADMIN_TOKEN as the units get it: the launcher's environment wins, else the local default. */
export function adminToken(env: NodeJS.ProcessEnv = process.env): string {
  return env.ADMIN_TOKEN !== undefined && env.ADMIN_TOKEN !== "" ? env.ADMIN_TOKEN : DEFAULT_ADMIN_TOKEN;
}

export interface UnitEnvironmentContext {
  /** Postgres server URL; each unit gets its own database on it. */
  databaseServerUrl: string;
  natsUrl: string;
  ports: UnitPorts;
  /** The launcher's own environment, passed through. */
  baseEnv?: NodeJS.ProcessEnv;
}

/**
 * The environment of one unit. Precedence: the launcher's own environment is passed through;
 * LOG_LEVEL, ADMIN_TOKEN, the peer URLs, PAYMENT_PAGE_HOST and PUBLIC_BASE_URL get local defaults
 * that an explicit value in that environment overrides; DATABASE_URL (the unit's own database, none
 * for the gateway), NATS_URL, LOCAL_MODE and the unit's ports are always set by the launcher.
 */
export function unitEnvironment(unit: UnitSpec, context: UnitEnvironmentContext): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...(context.baseEnv ?? process.env) };
  delete base.DATABASE_URL;
  delete base.NATS_URL;
  for (const variable of PER_UNIT_VARIABLES) delete base[variable];

  const urls = localUrls(context.ports);
  const defaults: Record<string, string> = {
    LOG_LEVEL: "info",
    ADMIN_TOKEN: DEFAULT_ADMIN_TOKEN,
    OPERATIONS_URL: urls.OPERATIONS_URL,
    ROUTING_URL: urls.ROUTING_URL,
    LEDGER_URL: urls.LEDGER_URL,
    RECEIPTS_URL: urls.RECEIPTS_URL,
    NOTIFIER_URL: urls.NOTIFIER_URL,
    SANDBOX_URL: urls.SANDBOX_URL,
    PAYMENT_PAGE_HOST: urls.PAYMENT_PAGE_HOST,
    PUBLIC_BASE_URL: urls.PUBLIC_BASE_URL,
  };
  const env: NodeJS.ProcessEnv = { ...base };
  for (const [name, value] of Object.entries(defaults)) {
    if (env[name] === undefined || env[name] === "") env[name] = value;
  }

  env.LOCAL_MODE = "true";
  env.NATS_URL = context.natsUrl;
  if (unit.database !== undefined) env.DATABASE_URL = databaseUrlFor(context.databaseServerUrl, unit.database);
  for (const [variable, port] of Object.entries(context.ports[unit.name])) env[variable] = String(port);
  return env;
}

/** The file URL of tsx's loader (for `node --import`), resolved from the repository root. */
export function tsxLoader(rootDir: string): string {
  let packageJsonPath: string;
  try {
    packageJsonPath = require.resolve("tsx/package.json", { paths: [rootDir] });
  } catch {
    throw new Error(`tsx is not installed in ${rootDir}/node_modules; run the install first (npx pnpm install)`);
  }
  const manifest = JSON.parse(fs.readFileSync(packageJsonPath, "utf8")) as { exports?: Record<string, unknown> };
  const entry = manifest.exports?.["."];
  const relative = typeof entry === "string" ? entry : "./dist/loader.mjs";
  return pathToFileURL(path.join(path.dirname(packageJsonPath), relative)).href;
}

/** The kit's tracing entry, which starts OpenTelemetry before the unit loads when OTEL_EXPORTER_OTLP_ENDPOINT is set (and does nothing otherwise). */
export const tracingEntry = (rootDir: string): string => pathToFileURL(path.join(rootDir, "services", "kit", "src", "runtime", "tracing-register.ts")).href;

/** The command that runs a unit: `node --import <tsx loader> --import <tracing entry> <entry>`. */
export function unitCommand(unit: UnitSpec, rootDir: string): { command: string; args: string[] } {
  return { command: process.execPath, args: ["--import", tsxLoader(rootDir), "--import", tracingEntry(rootDir), path.join(rootDir, unit.entry)] };
}

/**
 * Spawns a unit as a child process in its own process group (so a terminal Ctrl-C reaches only
 * the launcher, which stops the units in order), stdout and stderr piped.
 */
export function spawnUnit(unit: UnitSpec, options: { rootDir: string; env: NodeJS.ProcessEnv }): ChildProcess {
  const entry = path.join(options.rootDir, unit.entry);
  if (!fs.existsSync(entry)) throw new Error(`${unit.name}: entry ${entry} does not exist`);
  const { command, args } = unitCommand(unit, options.rootDir);
  return spawn(command, args, {
    cwd: options.rootDir,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
}
