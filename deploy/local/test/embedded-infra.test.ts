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
