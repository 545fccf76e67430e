import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { connect } from "nats";
import { startEmbeddedInfra } from "../src/embedded-infra";
import { canConnect } from "../src/process-utils";

describe("startEmbeddedInfra", () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "pgw-infra-"));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("starts Postgres and nats-server under rootDir, both usable, and stops both", async () => {
    const infra = await startEmbeddedInfra({ rootDir: dir });
    try {
      expect(infra.embedded).toEqual({ postgres: true, nats: true });
      const pgPort = Number(new URL(infra.databaseUrl).port);
      const natsPort = Number(new URL(infra.natsUrl.replace("nats://", "http://")).port);
      expect([pgPort, natsPort]).not.toContain(5432);
      expect([pgPort, natsPort]).not.toContain(4222);
      expect(fs.existsSync(path.join(dir, "postgres", "PG_VERSION"))).toBe(true);
      expect(fs.existsSync(path.join(dir, "nats"))).toBe(true);

      const client = new Client({ connectionString: infra.databaseUrl });
      await client.connect();
      expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      await client.end();

      const nc = await connect({ servers: infra.natsUrl, timeout: 5_000 });
      expect(nc.info?.jetstream).toBe(true);
      await nc.close();

      await infra.stop();
      expect(await canConnect(pgPort)).toBe(false);
      expect(await canConnect(natsPort)).toBe(false);
    } finally {
      await infra.stop();
    }
  });

  test("a killed server starts again on its port and data; stop() stops the new one, also one still starting", async () => {
    const infra = await startEmbeddedInfra({ rootDir: path.join(dir, "restart") });
    try {
      const [postgres, nats] = infra.servers;
      expect(infra.servers.map((s) => s.name)).toEqual(["Postgres", "nats-server"]);
      const client = new Client({ connectionString: infra.databaseUrl });
      await client.connect();
      await client.query("CREATE TABLE kept (note text)");
      await client.query("INSERT INTO kept VALUES ('survives a kill')");
      await client.end();
      const nc = await connect({ servers: infra.natsUrl, timeout: 5_000 });
      const created = (await (await nc.jetstreamManager()).streams.add({ name: "KEPT", subjects: ["kept.>"] })).created;
      await nc.close();

      // kill -9 both, as a user would
      const before = { postgres: postgres.pid, nats: nats.pid };
      process.kill(before.postgres!, "SIGKILL");
      process.kill(before.nats!, "SIGKILL");
      expect(await postgres.exited).toEqual({ code: null, signal: "SIGKILL" });
      expect(await nats.exited).toEqual({ code: null, signal: "SIGKILL" });

      await postgres.restart();
      await nats.restart();
      expect(Number(new URL(infra.databaseUrl).port)).toBe(postgres.port);
      expect(postgres.pid).not.toBe(before.postgres);
      expect(infra.processes.postgres?.pid).toBe(postgres.pid);
      expect(infra.processes.nats?.pid).toBe(nats.pid);
      const again = new Client({ connectionString: infra.databaseUrl });
      await again.connect();
      expect((await again.query("SELECT note FROM kept")).rows).toEqual([{ note: "survives a kill" }]);
      await again.end();
      const nc2 = await connect({ servers: infra.natsUrl, timeout: 5_000 });
      expect((await (await nc2.jetstreamManager()).streams.info("KEPT")).created).toBe(created);
      await nc2.close();

      // killed again, and stopped while its restart is under way: the restarted server is stopped too
      process.kill(nats.pid!, "SIGKILL");
      await nats.exited;
      const restarting = nats.restart();
      await infra.stop();
      await restarting;
      expect(await canConnect(nats.port)).toBe(false);
      expect(await canConnect(postgres.port)).toBe(false);
      await expect(nats.restart()).rejects.toThrow("stopping");
    } finally {
      await infra.stop();
    }
  });

  test("uses servers given by URL and starts nothing for them", async () => {
    const infra = await startEmbeddedInfra({
      rootDir: path.join(dir, "unused"),
      databaseUrl: "postgres://someone@db.example:5432/postgres",
      natsUrl: "nats://nats.example:4222",
    });
    expect(infra.embedded).toEqual({ postgres: false, nats: false });
    expect(infra.databaseUrl).toBe("postgres://someone@db.example:5432/postgres");
    expect(infra.natsUrl).toBe("nats://nats.example:4222");
    expect(fs.existsSync(path.join(dir, "unused"))).toBe(false);
    await infra.stop();
  });

  test("says which servers it uses without their credentials (a password, or a token, of each NATS server)", async () => {
    const said: string[] = [];
    await startEmbeddedInfra({
      rootDir: path.join(dir, "unused"),
      databaseUrl: "postgres://someone:pg-secret@db.example:5432/postgres",
      natsUrl: "nats://u:nats-secret@n1.example:4222,nats://nats-token@n2.example:4222",
      log: (line) => said.push(line),
    });
    expect(said).toEqual(["using the Postgres server at postgres://someone:***@db.example:5432/postgres", "using the NATS server at nats://n1.example:4222, nats://n2.example:4222"]);
  });
});
