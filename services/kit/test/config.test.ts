import { bindHost, ConfigError, env, loadConfig } from "@pgw/kit/runtime";
import { serviceConfigShape } from "@pgw/kit/runtime";

const shape = { PORT: env.port(8080), URL: env.url(undefined, ["postgres:"]), FLAG: env.bool(false), LEVEL: env.logLevel() };

describe("loadConfig", () => {
  it("applies defaults and coerces values", () => {
    expect(loadConfig(shape, { URL: "postgres://h/db", FLAG: "TRUE" })).toEqual({ PORT: 8080, URL: "postgres://h/db", FLAG: true, LEVEL: "info" });
  });

  it.each([
    [{}, "URL", "invalid configuration: URL is required"],
    [{ URL: "http://h" }, "URL", 'URL must be a URL (postgres:) (got "http://h")'],
    [{ URL: "postgres://h/db", PORT: "80a" }, "PORT", "PORT must be a port number"],
    [{ URL: "postgres://h/db", PORT: "70000" }, "PORT", "PORT"],
    [{ URL: "postgres://h/db", FLAG: "maybe" }, "FLAG", "FLAG must be true or false"],
  ])("refuses %j naming %s", (source, variable, message) => {
    let error: unknown;
    try {
      loadConfig(shape, source as NodeJS.ProcessEnv);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as ConfigError).message).toContain(message);
  });
});

describe("serviceConfigShape", () => {
  const base = { DATABASE_URL: "postgres://h/db" };
  it("sizes the pg pool from DB_POOL_SIZE (10 by default) and refuses an empty pool", () => {
    expect(loadConfig(serviceConfigShape(50051, 9091), base).DB_POOL_SIZE).toBe(10);
    expect(loadConfig(serviceConfigShape(50051, 9091), { ...base, DB_POOL_SIZE: "4" }).DB_POOL_SIZE).toBe(4);
    expect(() => loadConfig(serviceConfigShape(50051, 9091), { ...base, DB_POOL_SIZE: "0" })).toThrow('DB_POOL_SIZE must be an integer of at least 1 (got "0")');
  });

  it("refuses a DATABASE_URL that names no database at start, instead of retrying it for ever", () => {
    for (const url of ["postgres://u:p@127.0.0.1:5432", "postgres://127.0.0.1:5432/", "postgres://"]) {
      expect(() => loadConfig(serviceConfigShape(50051, 9091), { DATABASE_URL: url })).toThrow(/DATABASE_URL must (name its database|be a URL)/);
    }
    expect(loadConfig(serviceConfigShape(50051, 9091), { DATABASE_URL: "postgresql://u@h:5432/pgw_ledger?sslmode=require" }).DATABASE_URL).toContain("pgw_ledger");
  });
});

describe("NATS_URL", () => {
  const base = { DATABASE_URL: "postgres://h/db" };
  it("takes a cluster's servers comma-separated, each checked", () => {
    expect(loadConfig(serviceConfigShape(50051, 9091), { ...base, NATS_URL: "nats://a:4222, nats://b:4222,tls://c:4222" }).NATS_URL).toBe("nats://a:4222, nats://b:4222,tls://c:4222");
    expect(() => loadConfig(serviceConfigShape(50051, 9091), { ...base, NATS_URL: "nats://a:4222,http://b:4222" })).toThrow(/NATS_URL must be one or more comma-separated URLs/);
  });
});

describe("bindHost", () => {
  it("listens on loopback only in local mode, on every interface otherwise, and takes BIND_HOST when it is an IP address", () => {
    expect(bindHost({ LOCAL_MODE: "true" })).toBe("127.0.0.1");
    expect(bindHost({})).toBe("0.0.0.0");
    expect(bindHost({ LOCAL_MODE: "true", BIND_HOST: "0.0.0.0" })).toBe("0.0.0.0");
    expect(bindHost({ BIND_HOST: "::" })).toBe("::");
    expect(() => bindHost({ BIND_HOST: "everywhere" })).toThrow('BIND_HOST must be an IP address (got "everywhere")');
  });
});

describe("env.secret", () => {
  const shape = (source: NodeJS.ProcessEnv) => ({ ADMIN_TOKEN: env.secret(source, "dev-admin-token") });
  const load = (source: NodeJS.ProcessEnv) => loadConfig(shape(source), source);
  it("defaults to the development value in local mode only", () => {
    expect(load({ LOCAL_MODE: "true" }).ADMIN_TOKEN).toBe("dev-admin-token");
    expect(() => load({})).toThrow("ADMIN_TOKEN is required");
  });
  it("refuses, outside local mode, a short secret and the development value", () => {
    expect(() => load({ ADMIN_TOKEN: "x" })).toThrow('ADMIN_TOKEN must be at least 16 characters outside local mode (got "x")');
    const dev = { ADMIN_TOKEN: env.secret({}, "a-development-value-1") };
    expect(() => loadConfig(dev, { ADMIN_TOKEN: "a-development-value-1" })).toThrow("ADMIN_TOKEN must not be the development value outside local mode");
    expect(load({ ADMIN_TOKEN: "a-long-random-production-token" }).ADMIN_TOKEN).toBe("a-long-random-production-token");
  });
});

describe("env.publicBaseUrl", () => {
  const load = (source: NodeJS.ProcessEnv) => loadConfig({ PUBLIC_BASE_URL: env.publicBaseUrl(source) }, source).PUBLIC_BASE_URL;
  it("defaults to the local gateway in local mode only, where plain HTTP will do", () => {
    expect(load({ LOCAL_MODE: "true" })).toBe("http://127.0.0.1:8080");
    expect(load({ LOCAL_MODE: "true", PUBLIC_BASE_URL: "http://127.0.0.1:18080/" })).toBe("http://127.0.0.1:18080");
    expect(() => load({})).toThrow("PUBLIC_BASE_URL is required");
  });
  it("is HTTPS outside local mode, read without trailing slashes", () => {
    expect(() => load({ PUBLIC_BASE_URL: "http://pay.example.com" })).toThrow('PUBLIC_BASE_URL must be an https URL outside local mode (got "http://pay.example.com")');
    expect(() => load({ PUBLIC_BASE_URL: "pay.example.com" })).toThrow(/PUBLIC_BASE_URL must be an https URL/);
    expect(load({ PUBLIC_BASE_URL: "https://pay.example.com//" })).toBe("https://pay.example.com");
  });
});
