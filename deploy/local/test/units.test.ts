import path from "node:path";
import fs from "node:fs";
import {
  DEFAULT_ADMIN_TOKEN,
  UNITS,
  adminToken,
  databaseUrlFor,
  readinessUrl,
  resolveUnitPorts,
  tsxLoader,
  tracingEntry,
  unitCommand,
  unitEnvironment,
  type UnitName,
} from "../src/units";

const ROOT = path.resolve(__dirname, "..", "..", "..");
const unit = (name: UnitName) => {
  const found = UNITS.find((u) => u.name === name);
  if (!found) throw new Error(`no unit ${name}`);
  return found;
};
const context = (baseEnv: NodeJS.ProcessEnv = {}) => ({
  databaseServerUrl: "postgres://postgres:postgres@127.0.0.1:40001/postgres",
  natsUrl: "nats://127.0.0.1:40002",
  ports: resolveUnitPorts(baseEnv),
  baseEnv,
});

describe("unit table", () => {
  test("lists every unit once, services before the gateway, with the documented ports", () => {
    expect(UNITS.map((u) => u.name)).toEqual(["operations", "routing", "ledger", "receipts", "notifier", "provider-sandbox", "gateway"]);
    expect(UNITS[UNITS.length - 1].kind).toBe("gateway");
    const ports = resolveUnitPorts({});
    expect(ports.operations).toEqual({ GRPC_PORT: 50051, HEALTH_PORT: 9091 });
    expect(ports.notifier).toEqual({ GRPC_PORT: 50055, HEALTH_PORT: 9095 });
    expect(ports["provider-sandbox"]).toEqual({ HTTP_PORT: 8090 });
    expect(ports.gateway).toEqual({ HTTP_PORT: 8080, ADMIN_PORT: 8081, HEALTH_PORT: 9090 });
    expect(readinessUrl(unit("ledger"), ports)).toBe("http://127.0.0.1:9093/readyz");
    expect(readinessUrl(unit("provider-sandbox"), ports)).toBe("http://127.0.0.1:8090/readyz");
    expect(readinessUrl(unit("gateway"), ports)).toBe("http://127.0.0.1:9090/readyz");
  });

  test("refuses a port override that is no port, or that another unit's port already uses", () => {
    expect(() => resolveUnitPorts({ GATEWAY_HTTP_PORT: "abc" })).toThrow("invalid configuration: GATEWAY_HTTP_PORT must be a port number");
    expect(() => resolveUnitPorts({ OPERATIONS_GRPC_PORT: "18080", GATEWAY_HTTP_PORT: "18080" })).toThrow(
      "invalid configuration: GATEWAY_HTTP_PORT and OPERATIONS_GRPC_PORT are both port 18080",
    );
    expect(() => resolveUnitPorts({ LEDGER_HEALTH_PORT: "9091" })).toThrow(/LEDGER_HEALTH_PORT and OPERATIONS_HEALTH_PORT are both port 9091/);
    expect(resolveUnitPorts({ GATEWAY_HTTP_PORT: "18080" }).gateway.HTTP_PORT).toBe(18080);
  });

  test("each unit gets its own database; the gateway none", () => {
    const databases = UNITS.map((u) => unitEnvironment(u, context()).DATABASE_URL);
    expect(databases).toEqual([
      "postgres://postgres:postgres@127.0.0.1:40001/pgw_operations",
      "postgres://postgres:postgres@127.0.0.1:40001/pgw_routing",
      "postgres://postgres:postgres@127.0.0.1:40001/pgw_ledger",
      "postgres://postgres:postgres@127.0.0.1:40001/pgw_receipts",
      "postgres://postgres:postgres@127.0.0.1:40001/pgw_notifier",
      "postgres://postgres:postgres@127.0.0.1:40001/pgw_sandbox",
      undefined,
    ]);
    // even when the launcher itself was given DATABASE_URL
    expect(unitEnvironment(unit("gateway"), context({ DATABASE_URL: "postgres://x@db:5432/app" })).DATABASE_URL).toBeUndefined();
  });

  test("sets NATS, local mode, the unit's own ports and the peer URLs", () => {
    const env = unitEnvironment(unit("routing"), context());
    expect(env).toMatchObject({
      NATS_URL: "nats://127.0.0.1:40002",
      LOCAL_MODE: "true",
      LOG_LEVEL: "info",
      GRPC_PORT: "50052",
      HEALTH_PORT: "9092",
      OPERATIONS_URL: "http://127.0.0.1:50051",
      ROUTING_URL: "http://127.0.0.1:50052",
      LEDGER_URL: "http://127.0.0.1:50053",
      RECEIPTS_URL: "http://127.0.0.1:50054",
      NOTIFIER_URL: "http://127.0.0.1:50055",
      SANDBOX_URL: "http://127.0.0.1:8090",
      ADMIN_TOKEN: DEFAULT_ADMIN_TOKEN,
      PAYMENT_PAGE_HOST: "http://127.0.0.1:8080/pay",
      PUBLIC_BASE_URL: "http://127.0.0.1:8080",
    });
    expect(env.HTTP_PORT).toBeUndefined();
    const gateway = unitEnvironment(unit("gateway"), context());
    expect(gateway).toMatchObject({ HTTP_PORT: "8080", ADMIN_PORT: "8081", HEALTH_PORT: "9090" });
    expect(gateway.GRPC_PORT).toBeUndefined();
  });

  test("passes the launcher's environment through; explicit ADMIN_TOKEN and LOG_LEVEL win, generic ports do not leak", () => {
    const base = { ADMIN_TOKEN: "s3cret", LOG_LEVEL: "debug", FOO: "bar", GRPC_PORT: "1", HEALTH_PORT: "2", NATS_URL: "nats://elsewhere:4222" };
    const env = unitEnvironment(unit("operations"), context(base));
    expect(env.ADMIN_TOKEN).toBe("s3cret");
    expect(env.LOG_LEVEL).toBe("debug");
    expect(env.FOO).toBe("bar");
    expect(env.GRPC_PORT).toBe("50051");
    expect(env.HEALTH_PORT).toBe("9091");
    expect(env.NATS_URL).toBe("nats://127.0.0.1:40002");
    expect(adminToken({})).toBe("dev-admin-token");
    expect(adminToken({ ADMIN_TOKEN: "" })).toBe("dev-admin-token");
    expect(adminToken({ ADMIN_TOKEN: "x" })).toBe("x");
  });

  test("per-unit port overrides move the unit and every URL pointing at it", () => {
    const base = { GATEWAY_HTTP_PORT: "18080", ROUTING_GRPC_PORT: "50062", PROVIDER_SANDBOX_HTTP_PORT: "18090" };
    const ctx = context(base);
    expect(unitEnvironment(unit("gateway"), ctx).HTTP_PORT).toBe("18080");
    const operations = unitEnvironment(unit("operations"), ctx);
    expect(operations.ROUTING_URL).toBe("http://127.0.0.1:50062");
    expect(operations.SANDBOX_URL).toBe("http://127.0.0.1:18090");
    expect(operations.PUBLIC_BASE_URL).toBe("http://127.0.0.1:18080");
    expect(operations.PAYMENT_PAGE_HOST).toBe("http://127.0.0.1:18080/pay");
    expect(readinessUrl(unit("provider-sandbox"), ctx.ports)).toBe("http://127.0.0.1:18090/readyz");
    expect(() => resolveUnitPorts({ LEDGER_HEALTH_PORT: "nine" })).toThrow(/LEDGER_HEALTH_PORT/);
  });

  test("databaseUrlFor swaps only the database name", () => {
    expect(databaseUrlFor("postgres://u:p@db.example:6543/postgres?sslmode=require", "pgw_ledger")).toBe(
      "postgres://u:p@db.example:6543/pgw_ledger?sslmode=require",
    );
    expect(databaseUrlFor("postgresql://u@127.0.0.1:5432", "pgw_routing")).toBe("postgresql://u@127.0.0.1:5432/pgw_routing");
  });

  test("runs units with node, the repository's tsx loader and the kit's tracing entry", () => {
    const loader = tsxLoader(ROOT);
    expect(loader.startsWith("file://")).toBe(true);
    expect(fs.existsSync(new URL(loader))).toBe(true);
    expect(fs.existsSync(new URL(tracingEntry(ROOT)))).toBe(true);
    const { command, args } = unitCommand(unit("notifier"), ROOT);
    expect(command).toBe(process.execPath);
    expect(args).toEqual(["--import", loader, "--import", tracingEntry(ROOT), path.join(ROOT, "services/notifier/src/main.ts")]);
  });
});
