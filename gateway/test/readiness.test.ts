import { spawnSync } from "node:child_process";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { startLedger } from "../../services/ledger/src/main";
import { startOperations } from "../../services/operations/src/main";
import { startGateway } from "../src/main";
import { request } from "../../test/support/http";
import { pollUntil } from "../../test/support/poll";
import { dropDatabases, natsUrl, uniqueDatabaseUrl } from "../../test/support/infra";
import { TcpProxy } from "../../test/support/tcp-proxy";
import { freePort } from "@pgw/kit/testing";

const root = path.join(__dirname, "..", "..");

const readyzWithin = (port: number, expected: number, ms: number) =>
  pollUntil(async () => (await request(`http://127.0.0.1:${port}/readyz`)).status, (status) => status === expected, ms, 100);
/** Status of each probe on a port, read once. */
const probes = async (port: number) => {
  const status = async (probe: string) => (await request(`http://127.0.0.1:${port}${probe}`)).status;
  return { livez: await status("/livez"), healthz: await status("/healthz"), readyz: await status("/readyz") };
};
const SERVING = { livez: 204, healthz: 204, readyz: 204 };
// Live (no restart), but neither healthy nor ready (spec: /healthz is 503 when the unit cannot serve).
const NOT_SERVING = { livez: 204, healthz: 503, readyz: 503 };

describe("readiness follows the dependencies without a restart", () => {
  it("answers 503 while the database or NATS is unreachable and 204 once they return", async () => {
    const dbUrl = uniqueDatabaseUrl("ledger");
    const pgProxy = TcpProxy.forUrl(dbUrl);
    const natsProxy = TcpProxy.forUrl(natsUrl().replace("nats://", "http://"));
    await pgProxy.start();
    await natsProxy.start();
    const unit = await startLedger({
      DATABASE_URL: pgProxy.rewrite(dbUrl),
      NATS_URL: `nats://127.0.0.1:${natsProxy.port}`,
      GRPC_PORT: "0",
      HEALTH_PORT: "0",
      LOG_LEVEL: "silent",
      LOCAL_MODE: "true",
    });
    try {
      expect(await readyzWithin(unit.healthPort, 204, 2000)).toBe(204);
      expect(await probes(unit.healthPort)).toEqual(SERVING);

      await pgProxy.cut();
      expect(await readyzWithin(unit.healthPort, 503, 5000)).toBe(503);
      expect(await probes(unit.healthPort)).toEqual(NOT_SERVING);
      await pgProxy.start();
      expect(await readyzWithin(unit.healthPort, 204, 10000)).toBe(204);
      expect(await probes(unit.healthPort)).toEqual(SERVING);

      await natsProxy.cut();
      expect(await readyzWithin(unit.healthPort, 503, 5000)).toBe(503);
      expect(await probes(unit.healthPort)).toEqual(NOT_SERVING);
      await natsProxy.start();
      expect(await readyzWithin(unit.healthPort, 204, 10000)).toBe(204);
      expect(await probes(unit.healthPort)).toEqual(SERVING);
    } finally {
      await unit.stop();
      await pgProxy.cut();
      await natsProxy.cut();
      await dropDatabases([dbUrl]);
    }
  }, 60_000);
});

describe("readiness during start-up", () => {
  it("answers 503 while the unit still waits for NATS, before its gRPC port is open, and 204 once it serves", async () => {
    const dbUrl = uniqueDatabaseUrl("ledger");
    const natsProxy = TcpProxy.forUrl(natsUrl().replace("nats://", "http://"));
    await natsProxy.start();
    await natsProxy.hangUp(); // the port is known; whoever connects is hung up on at once, and counted
    const healthPort = await freePort();
    let natsBack = false;
    const starting = startLedger({ DATABASE_URL: dbUrl, NATS_URL: `nats://127.0.0.1:${natsProxy.port}`, GRPC_PORT: "0", HEALTH_PORT: String(healthPort), LOG_LEVEL: "silent", LOCAL_MODE: "true" });
    const readyz = () => request(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
    try {
      // The probe port opens first and the migrations run; then the unit tries NATS, again and again.
      const statuses: number[] = [];
      const attempts = await pollUntil(
        async () => {
          statuses.push((await readyz())?.status ?? 0);
          return natsProxy.turnedAway;
        },
        (turnedAway) => turnedAway >= 3,
        30_000,
        100,
      );
      expect(attempts).toBeGreaterThanOrEqual(3);
      expect(statuses.filter((s) => s !== 0).length).toBeGreaterThan(0);
      expect(statuses.filter((s) => s !== 0 && s !== 503)).toEqual([]);
      // Turned away by NATS, it says what it waits for: NATS, and so its gRPC port; the migrations are done.
      const waiting = await readyz();
      expect(waiting?.status).toBe(503);
      const failing = String(waiting?.headers["x-failing-checks"]).split(",");
      expect(failing).toEqual(expect.arrayContaining(["nats", "grpc"]));
      expect(failing).not.toContain("migrations");
      await natsProxy.start();
      natsBack = true;
      const unit = await starting;
      expect(await readyzWithin(unit.healthPort, 204, 5000)).toBe(204);
    } finally {
      if (!natsBack) await natsProxy.start(); // a start-up still waiting gets its NATS and can end
      await (await starting).stop();
      await natsProxy.cut();
      await dropDatabases([dbUrl]);
    }
  }, 60_000);
});

describe("gateway start-up", () => {
  it("is live but not ready while it waits for NATS, and opens its public port once NATS answers", async () => {
    const natsProxy = TcpProxy.forUrl(natsUrl().replace("nats://", "http://"));
    await natsProxy.start();
    await natsProxy.cut();
    const healthPort = await freePort();
    let natsBack = false;
    const starting = startGateway({ HTTP_PORT: "0", ADMIN_PORT: "0", HEALTH_PORT: String(healthPort), LOG_LEVEL: "silent", LOCAL_MODE: "true", NATS_URL: `nats://127.0.0.1:${natsProxy.port}` });
    try {
      const probe = (p: string) => pollUntil(() => request(`http://127.0.0.1:${healthPort}${p}`).then((r) => r.status, () => 0), (s) => s !== 0, 5000, 100);
      expect(await probe("/livez")).toBe(204);
      expect(await probe("/readyz")).toBe(503);
      expect((await request(`http://127.0.0.1:${healthPort}/readyz`)).headers["x-failing-checks"]).toContain("nats");
      await natsProxy.start();
      natsBack = true;
      const gateway = await starting;
      expect((await request(`http://127.0.0.1:${gateway.httpPort}/livez`)).status).toBe(204);
    } finally {
      if (!natsBack) await natsProxy.start();
      await (await starting).stop();
      await natsProxy.cut();
    }
  }, 60_000);
});

describe("gateway health on its public port", () => {
  it("answers /healthz 503 with /readyz while NATS is lost and 204 once it returns, on the public and health ports; /livez stays 204", async () => {
    const dbUrl = uniqueDatabaseUrl("operations");
    const natsProxy = TcpProxy.forUrl(natsUrl().replace("nats://", "http://"));
    await natsProxy.start();
    let natsUp = true;
    const common = { GRPC_PORT: "0", HEALTH_PORT: "0", LOG_LEVEL: "silent", LOCAL_MODE: "true", NATS_NAMESPACE: `t${randomBytes(4).toString("hex")}` };
    const operations = await startOperations({ ...common, DATABASE_URL: dbUrl, NATS_URL: natsUrl() });
    const gateway = await startGateway({ ...common, HTTP_PORT: "0", ADMIN_PORT: "0", NATS_URL: `nats://127.0.0.1:${natsProxy.port}`, OPERATIONS_URL: `http://127.0.0.1:${operations.grpcPort}` });
    try {
      expect(await readyzWithin(gateway.httpPort, 204, 5000)).toBe(204);
      for (const port of [gateway.httpPort, gateway.healthPort]) expect({ port, ...(await probes(port)) }).toEqual({ port, ...SERVING });

      await natsProxy.cut();
      natsUp = false;
      expect(await readyzWithin(gateway.httpPort, 503, 5000)).toBe(503);
      for (const port of [gateway.httpPort, gateway.healthPort]) expect({ port, ...(await probes(port)) }).toEqual({ port, ...NOT_SERVING });
      const healthz = await request(`http://127.0.0.1:${gateway.httpPort}/healthz`);
      expect(healthz.headers["x-failing-checks"]).toBe("nats");
      expect(healthz.body).toEqual({ error: { code: "unavailable", message: "not ready", details: [{ field: "nats", issue: "is failing" }] } });

      await natsProxy.start();
      natsUp = true;
      expect(await readyzWithin(gateway.httpPort, 204, 10000)).toBe(204);
      for (const port of [gateway.httpPort, gateway.healthPort]) expect({ port, ...(await probes(port)) }).toEqual({ port, ...SERVING });
    } finally {
      if (!natsUp) await natsProxy.start(); // a cut NATS would hold the gateway's drain
      await gateway.stop();
      await operations.stop();
      await natsProxy.cut();
      await dropDatabases([dbUrl]);
    }
  }, 60_000);
});

describe("configuration", () => {
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, ["--import", "tsx", "services/ledger/src/main.ts"], {
      cwd: root,
      env: { PATH: process.env.PATH, ...env },
      encoding: "utf8",
      timeout: 30_000,
    });

  it.each([
    [{ LOCAL_MODE: "true" }, "DATABASE_URL is required"],
    [{ LOCAL_MODE: "true", DATABASE_URL: "mysql://x/y" }, "DATABASE_URL must be a URL"],
    [{ LOCAL_MODE: "true", DATABASE_URL: "postgres://127.0.0.1/x", GRPC_PORT: "http" }, "GRPC_PORT must be a port number"],
    [{ LOCAL_MODE: "true", DATABASE_URL: "postgres://127.0.0.1/x", LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    [{ DATABASE_URL: "postgres://127.0.0.1/x" }, "GRPC_TLS_CA_FILE and GRPC_TLS_CERT_FILE, GRPC_TLS_KEY_FILE are required outside local mode"],
  ])("a unit started with %j exits non-zero with one line naming the variable", (env, expected) => {
    const result = run(env as Record<string, string>);
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(expected);
  });
});
