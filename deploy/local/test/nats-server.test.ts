import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { connect, StringCodec } from "nats";
import { startNatsServer, type NatsServer } from "../src/nats-server";
import { canConnect } from "../src/process-utils";

describe("startNatsServer", () => {
  let dir: string;
  let server: NatsServer | undefined;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "pgw-nats-"));
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("starts on a free port with JetStream, accepts a NATS connection, and stops", async () => {
    server = await startNatsServer({ storeDir: path.join(dir, "nats") });
    const { port, url } = server;
    expect(port).not.toBe(4222);
    expect(url).toBe(`nats://127.0.0.1:${port}`);

    const nc = await connect({ servers: url, timeout: 5_000 });
    try {
      const codec = StringCodec();
      const sub = nc.subscribe("pgw.test.ping", { max: 1 });
      const received = (async () => {
        for await (const message of sub) return codec.decode(message.data);
        return undefined;
      })();
      nc.publish("pgw.test.ping", codec.encode("pong"));
      expect(await received).toBe("pong");

      // JetStream is on: a stream can be created and takes a message
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: "PGWTEST", subjects: ["pgwtest.>"] });
      const ack = await nc.jetstream().publish("pgwtest.one", codec.encode("x"));
      expect(ack.stream).toBe("PGWTEST");
      expect(ack.seq).toBe(1);
    } finally {
      await nc.close();
    }

    await server.stop();
    server = undefined;
    expect(await canConnect(port)).toBe(false);
    expect(fs.existsSync(path.join(dir, "nats", "jetstream"))).toBe(true);
  });
});
