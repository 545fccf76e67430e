import { nanos, type ConnectionOptions, type NatsConnection } from "nats";
import { connectNats, DUPLICATE_WINDOW_MS, ensureStream, natsReady, STREAM_NAME } from "@pgw/kit/events";
import { memoryLog, waitFor } from "@pgw/kit/testing";
import { PrivateNatsServer } from "@pgw/kit/testing";

jest.setTimeout(30_000);

let server: PrivateNatsServer;
let nc: NatsConnection;
const log = memoryLog();

beforeAll(async () => {
  server = await PrivateNatsServer.start();
  nc = await connectNats(server.url, "kit-nats-test", log);
});

afterAll(async () => {
  await nc.close().catch(() => undefined);
  await server.destroy();
});

test("connectNats makes requests and publishes build no stack trace up front (noAsyncTraces)", () => {
  expect((nc as unknown as { options: ConnectionOptions }).options.noAsyncTraces).toBe(true);
});

test("ensureStream creates PGW once when racing, and converges an existing stream's settings", async () => {
  const others = await Promise.all([1, 2, 3].map((i) => connectNats(server.url, `racer-${i}`, log)));
  try {
    const infos = await Promise.all([nc, ...others, nc].map((c) => ensureStream(c)));
    for (const i of infos) expect(i.config.name).toBe(STREAM_NAME);
  } finally {
    await Promise.all(others.map((c) => c.close()));
  }
  const jsm = await nc.jetstreamManager();
  const names: string[] = [];
  for await (const s of jsm.streams.list()) names.push(s.config.name);
  expect(names).toEqual([STREAM_NAME]);
  let info = await jsm.streams.info(STREAM_NAME);
  expect(info.config.subjects).toEqual(["pgw.>"]);
  expect(info.config.storage).toBe("file");
  expect(info.config.duplicate_window).toBe(nanos(DUPLICATE_WINDOW_MS));

  await jsm.streams.update(STREAM_NAME, { ...info.config, duplicate_window: nanos(5000) });
  await ensureStream(nc);
  info = await jsm.streams.info(STREAM_NAME);
  expect(info.config.duplicate_window).toBe(nanos(DUPLICATE_WINDOW_MS));

  // De-duplication by Nats-Msg-Id within the window.
  const js = nc.jetstream();
  const a = await js.publish("pgw.test.dedupe", new Uint8Array([1]), { msgID: "same-id" });
  const b = await js.publish("pgw.test.dedupe", new Uint8Array([2]), { msgID: "same-id" });
  expect(a.duplicate).toBe(false);
  expect(b.duplicate).toBe(true);
  expect(b.seq).toBe(a.seq);
});

test("natsReady follows the server: true, false while it is down, true after it comes back, false once closed", async () => {
  expect(await natsReady(nc, 1000)).toBe(true);

  await server.kill();
  await waitFor(() => log.lines.some((l) => l.msg === "nats disconnected"), 5000, "disconnect logged");
  const started = Date.now();
  expect(await natsReady(nc, 300)).toBe(false);
  expect(Date.now() - started).toBeLessThan(1500);

  await server.start();
  await waitFor(() => natsReady(nc, 500), 10_000, "ready after restart");
  expect(log.lines.some((l) => l.msg === "nats reconnected")).toBe(true);

  await nc.close();
  expect(await natsReady(nc, 300)).toBe(false);
});
