import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { AppError, hmacHex } from "@pgw/contracts";
import { createLogger } from "@pgw/kit/runtime";
import { AccountsService } from "@pgw/proto/gen/pgw/operations/v1/accounts_pb";
import type Koa from "koa";
import { Registry } from "prom-client";
import { apiKeyAuth } from "./api-key-auth";
import { AuthRefusals } from "./auth-refusals";
import { ClientAttempts } from "./client-attempts";
import { KeyCache } from "./key-cache";
import { RateLimiter } from "./rate-limiter";
import { createUnknownKeys } from "./unknown-keys";

const SECRET = "test-secret";
const KEY = `pgw_${"a".repeat(43)}`;
/** The clock's start: lru-cache reads an entry stored at time 0 as one that never expires. */
const T0 = 1_000_000;

const settle = () => new Promise((r) => setImmediate(r));

/** Enough turns of the event loop for a call through the in-memory transport to arrive or finish. */
async function drain(): Promise<void> {
  for (let turn = 0; turn < 20; turn++) await settle();
}

/** Lets the event loop run until `done()`; fails instead of spinning for ever. */
async function until(done: () => boolean): Promise<void> {
  for (let turns = 0; !done(); turns++) {
    if (turns > 1000) throw new Error("the awaited call never came");
    await settle();
  }
}

/** An accounts service that knows KEY while `known` is true and is down while `down` is; each resolve waits for `answer()`. */
function accounts() {
  const state = { calls: 0, known: true, down: false, waiting: [] as (() => void)[] };
  const transport = createRouterTransport(({ service }) =>
    service(AccountsService, {
      async resolveApiKey(req) {
        state.calls++;
        await new Promise<void>((r) => state.waiting.push(r));
        if (state.down) throw new ConnectError("operations is down", Code.Unavailable);
        if (!state.known || req.keyHash !== hmacHex(SECRET, KEY)) throw new ConnectError("invalid api key", Code.NotFound);
        return { apiKeyId: "key-1", merchantId: "merchant-1", shopId: "shop-1", rateLimitRps: 1000 };
      },
    }),
  );
  /** Lets the resolves waiting now answer, once at least one has arrived, and their callers see the answers. */
  const answer = async () => {
    await until(() => state.waiting.length > 0);
    state.waiting.splice(0).forEach((r) => r());
    await drain();
  };
  return { state, answer, client: createClient(AccountsService, transport) };
}

/** Runs the middleware for one request with `token`; resolves to the shop it was scoped to, or the error. */
async function authenticate(middleware: Koa.Middleware, token: string): Promise<string | AppError> {
  const ctx = { req: { headers: { "x-api-key": token }, socket: { remoteAddress: "127.0.0.1" } }, state: {} as Record<string, { shopId: string }>, set: () => undefined, get: () => "" };
  try {
    await middleware(ctx as unknown as Koa.Context, async () => undefined);
    return ctx.state.auth.shopId;
  } catch (err) {
    return err as AppError;
  }
}

describe("API key authentication and its cache", () => {
  let now = T0;
  const setUp = ({ burst = 1000 } = {}) => {
    const service = accounts();
    const cache = new KeyCache(30_000, { maxEntries: 100, now: () => now });
    const middleware = apiKeyAuth({
      accounts: service.client,
      cache,
      unknownKeys: createUnknownKeys(10_000, { maxEntries: 100, now: () => now }),
      limiter: new RateLimiter(),
      attempts: new ClientAttempts({ trustedProxies: [], perSecond: 1000, burst, message: "slow down", now: () => now }),
      refusals: new AuthRefusals(new Registry()),
      apiKeyHashSecret: SECRET,
      log: createLogger("test", "silent"),
    });
    return { ...service, cache, middleware };
  };
  beforeEach(() => (now = T0));

  it("resolves a key once for all the requests that arrive while it is being resolved, beyond the address's burst: only the call takes a token", async () => {
    const { state, answer, middleware } = setUp({ burst: 4 });
    const answers = Array.from({ length: 50 }, () => authenticate(middleware, KEY));
    await answer();
    expect(await Promise.all(answers)).toEqual(Array(50).fill("shop-1"));
    expect(state.calls).toBe(1);
  });

  it("spends the address's budget only on lookups: a made-up key's waiters share its one token, its repeats answered from the unknown-key cache take none", async () => {
    const { state, answer, middleware } = setUp({ burst: 4 });
    const madeUp = `pgw_${"b".repeat(43)}`;
    const waiting = Array.from({ length: 12 }, () => authenticate(middleware, madeUp));
    await answer();
    expect((await Promise.all(waiting)).map((e) => (e as AppError).code)).toEqual(Array(12).fill("unauthorized"));
    const repeats: string[] = [];
    for (let i = 0; i < 10; i++) repeats.push(((await authenticate(middleware, madeUp)) as AppError).code);
    expect(repeats).toEqual(Array(10).fill("unauthorized"));
    expect(state.calls).toBe(1);
    // Other made-up keys each need a lookup: the three tokens left, then 429 without asking.
    const others: string[] = [];
    for (const c of "cdefg") {
      const refused = authenticate(middleware, `pgw_${c.repeat(43)}`);
      await drain();
      if (state.waiting.length > 0) await answer();
      others.push(((await refused) as AppError).code);
    }
    expect(others).toEqual(["unauthorized", "unauthorized", "unauthorized", "rate_limited", "rate_limited"]);
    expect(state.calls).toBe(4);
  });

  it("answers a missing header and a malformed key 401 however many come from one address, without a lookup or a token", async () => {
    const { state, answer, middleware } = setUp({ burst: 1 });
    const refusals = await Promise.all([...Array(30).fill(""), ...Array(30).fill("not-a-key")].map((token) => authenticate(middleware, token)));
    expect(refusals.map((e) => (e as AppError).message)).toEqual([...Array(30).fill("x-api-key header is required"), ...Array(30).fill("invalid api key")]);
    expect(state.calls).toBe(0);
    // The address's one token is still there for a key that must be looked up.
    const valid = authenticate(middleware, KEY);
    await answer();
    expect(await valid).toBe("shop-1");
  });

  it("answers from the cache past half the TTL while one call refreshes the key in the background", async () => {
    const { state, answer, middleware } = setUp();
    const first = authenticate(middleware, KEY);
    await answer();
    expect(await first).toBe("shop-1");
    now = T0 + 20_000; // past half the TTL, before its end
    const during = await Promise.all(Array.from({ length: 20 }, () => authenticate(middleware, KEY)));
    expect(during).toEqual(Array(20).fill("shop-1"));
    await answer();
    await settle();
    expect(state.calls).toBe(2);
    now = T0 + 45_000; // the first entry would have expired at 30 s; the refresh stored it at 20 s
    expect(await authenticate(middleware, KEY)).toBe("shop-1");
    expect(state.calls).toBe(2);
  });

  it("drops a key that the background refresh no longer finds", async () => {
    const { state, answer, middleware, cache } = setUp();
    const first = authenticate(middleware, KEY);
    await answer();
    await first;
    state.known = false; // revoked, and this gateway missed the event
    now = T0 + 16_000;
    expect(await authenticate(middleware, KEY)).toBe("shop-1");
    await answer();
    await settle();
    expect(cache.has(hmacHex(SECRET, KEY))).toBe(false);
    // Refused without asking again: the refresh's answer is in the unknown-key cache.
    expect(await authenticate(middleware, KEY)).toMatchObject({ code: "unauthorized", message: "invalid api key" });
    expect(state.calls).toBe(2);
  });

  it("does not cache a key resolved across a revocation", async () => {
    const { state, answer, middleware, cache } = setUp();
    const first = authenticate(middleware, KEY);
    await until(() => state.calls > 0);
    cache.evict(hmacHex(SECRET, KEY), "key-1"); // the revocation event arrives while operations answers
    await answer();
    expect(await first).toBe("shop-1");
    expect(cache.has(hmacHex(SECRET, KEY))).toBe(false);
    expect(state.calls).toBe(1);
  });

  it("refuses a key revoked while a resolve of it was in flight: a request after the revocation asks operations anew", async () => {
    const { state, answer, middleware, cache } = setUp();
    const before = authenticate(middleware, KEY);
    await until(() => state.calls > 0);
    state.known = false; // revoked at operations...
    cache.evictWhere((principal) => principal.apiKeyId === "key-1"); // ...and by the admin API of this gateway, which knows only the key's id
    const after = authenticate(middleware, KEY);
    await until(() => state.calls > 1);
    await answer();
    expect(await after).toMatchObject({ code: "unauthorized", message: "invalid api key" });
    expect(await before).toMatchObject({ code: "unauthorized" }); // its resolve was answered after the revocation too
    expect(cache.has(hmacHex(SECRET, KEY))).toBe(false);
    expect(state.calls).toBe(2);
  });

  it("asks operations about an unknown key once per TTL of the unknown-key cache", async () => {
    const { state, answer, middleware } = setUp();
    state.known = false;
    const first = authenticate(middleware, KEY);
    await answer();
    expect(await first).toMatchObject({ code: "unauthorized", message: "invalid api key" });
    now = T0 + 9_999;
    expect(await Promise.all(Array.from({ length: 20 }, () => authenticate(middleware, KEY)))).toEqual(Array(20).fill(expect.objectContaining({ message: "invalid api key" })));
    expect(state.calls).toBe(1);
    now = T0 + 10_001; // past the TTL the answer is forgotten: operations is asked again
    state.known = true;
    const later = authenticate(middleware, KEY);
    await answer();
    expect(await later).toBe("shop-1");
    expect(state.calls).toBe(2);
  });

  it("keeps answering from the cache while operations is down, retrying the refresh a tenth of the TTL apart", async () => {
    const { state, answer, middleware } = setUp();
    const first = authenticate(middleware, KEY);
    await answer();
    await first;
    state.down = true;
    now = T0 + 16_000;
    expect(await Promise.all(Array.from({ length: 20 }, () => authenticate(middleware, KEY)))).toEqual(Array(20).fill("shop-1"));
    await answer();
    now = T0 + 18_999;
    expect(await authenticate(middleware, KEY)).toBe("shop-1");
    await drain();
    expect(state.calls).toBe(2);
    now = T0 + 19_000;
    expect(await authenticate(middleware, KEY)).toBe("shop-1");
    await answer();
    expect(state.calls).toBe(3);
    now = T0 + 30_001; // past the TTL: the request itself needs operations
    const expired = authenticate(middleware, KEY);
    await answer();
    expect(await expired).toMatchObject({ code: "unavailable" });
  });
});
