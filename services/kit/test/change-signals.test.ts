import type { NatsConnection } from "nats";
import { NotifiedCache } from "@pgw/kit/db";
import { changeSignal, connectNats, followChangeSignal } from "@pgw/kit/events";
import { memoryLog, PrivateNatsServer, waitFor } from "@pgw/kit/testing";

jest.setTimeout(30_000);

const SUBJECT = "pgw_live.test.rows_changed";
const log = memoryLog();
let server: PrivateNatsServer;
let owner: NatsConnection;
let follower: NatsConnection;
/** The owner's signal, as a unit owning rows sends it. */
let signals: ReturnType<typeof changeSignal>;

beforeAll(async () => {
  server = await PrivateNatsServer.start();
  owner = await connectNats(server.url, "change-signal-owner", log);
  follower = await connectNats(server.url, "change-signal-follower", log);
  signals = changeSignal(owner, SUBJECT);
});

afterAll(async () => {
  await signals.stop();
  await Promise.all([owner, follower].map((nc) => nc.close().catch(() => undefined)));
  await server.destroy();
});

/** A copy whose loader answers a new number each time it runs. */
function counted() {
  const copy = new NotifiedCache<string, number>();
  let loads = 0;
  const load = async () => ++loads;
  /** Whether `key` is kept: two reads in a row give the same value. */
  const kept = async (key: string) => (await copy.get(key, load)) === (await copy.get(key, load));
  return { copy, load, kept };
}

test("keeps nothing until subscribed, then keeps until the owner signals a change, and nothing once stopped", async () => {
  const { copy, load, kept } = counted();
  expect(await kept("k")).toBe(false);
  const following = followChangeSignal(follower, SUBJECT, copy, log);
  try {
    await waitFor(() => kept("k"), 5000, "keeping once subscribed");
    const before = await copy.get("k", load);
    signals.signal();
    await waitFor(async () => (await copy.get("k", load)) !== before, 5000, "dropped at the signal");
    expect(await kept("k")).toBe(true);
  } finally {
    await following.stop();
  }
  expect(await kept("k")).toBe(false);
});

test("keeps nothing while disconnected, and keeps again once subscribed after the reconnect", async () => {
  const { copy, kept } = counted();
  const following = followChangeSignal(follower, SUBJECT, copy, log);
  try {
    await waitFor(() => kept("k"), 5000, "keeping once subscribed");
    const disconnected = (async () => {
      for await (const s of follower.status()) if (s.type === "disconnect") return;
    })();
    await server.kill();
    await disconnected;
    expect(await kept("k")).toBe(false);
    await server.start();
    await waitFor(() => kept("k"), 10_000, "keeping after the reconnect");
    // Subscribed again: a signal sent now, once the owner is connected again too, still reaches it.
    const value = await copy.get("k", async () => -1);
    await waitFor(() => owner.flush().then(() => true), 10_000, "the owner connected again");
    signals.signal();
    await waitFor(async () => (await copy.get("k", async () => -2)) === -2, 5000, "dropped at a signal after the reconnect");
    expect(value).not.toBe(-1);
  } finally {
    await following.stop();
  }
});

test("the owner signals again after each reconnect of its own: a signal sent while it was disconnected may be lost", async () => {
  const { copy, load, kept } = counted();
  const following = followChangeSignal(follower, SUBJECT, copy, log);
  try {
    await waitFor(() => kept("k"), 5000, "keeping once subscribed");
    const before = await copy.get("k", load);
    await owner.reconnect();
    await waitFor(async () => (await copy.get("k", load)) !== before, 5000, "dropped at the owner's signal after its reconnect");
  } finally {
    await following.stop();
  }
});
