import { ConfigError } from "@pgw/kit/runtime";
import { connectNats, loadNatsAuth, natsTarget } from "@pgw/kit/events";
import { memoryLog, waitFor } from "@pgw/kit/testing";
import { PrivateNatsServer } from "@pgw/kit/testing";

jest.setTimeout(30_000);

describe("a NATS server that requires a user and password", () => {
  let server: PrivateNatsServer;
  const log = memoryLog();
  beforeAll(async () => {
    server = await PrivateNatsServer.start(["--user", "pgw-unit", "--pass", "s3cret:p@ss"]);
  });
  afterAll(() => server.destroy());

  const roundTrip = async (url: string, auth?: Parameters<typeof connectNats>[3]) => {
    const nc = await connectNats(url, "kit-nats-auth-test", log, auth);
    try {
      await nc.flush();
      return nc.getServer();
    } finally {
      await nc.close();
    }
  };

  it("is reached with NATS_USER and NATS_PASSWORD", async () => {
    const auth = loadNatsAuth({ NATS_USER: "pgw-unit", NATS_PASSWORD: "s3cret:p@ss" });
    expect(await roundTrip(server.url, auth)).toBe(`127.0.0.1:${server.port}`);
  });

  it("is reached with the credentials written into the URL (the client library alone ignores them)", async () => {
    expect(await roundTrip(`nats://pgw-unit:${encodeURIComponent("s3cret:p@ss")}@127.0.0.1:${server.port}`)).toBe(`127.0.0.1:${server.port}`);
  });

  it("reports the connection lost for good when the server refuses the credentials after the start (a rotation half done)", async () => {
    const lost: Error[] = [];
    const nc = await connectNats(server.url, "kit-nats-auth-test", log, loadNatsAuth({ NATS_USER: "pgw-unit", NATS_PASSWORD: "s3cret:p@ss" }), (err) => lost.push(err));
    try {
      await server.restartWith(["--user", "pgw-unit", "--pass", "rotated-elsewhere"]);
      // The client stops reconnecting after two identical refusals: the unit must not run on, not ready.
      await waitFor(() => lost.length > 0, 20_000, "the connection reported lost");
      expect(String(lost[0])).toMatch(/Authorization Violation/);
      expect(nc.isClosed()).toBe(true);
    } finally {
      await server.restartWith(["--user", "pgw-unit", "--pass", "s3cret:p@ss"]);
    }
  }, 40_000);

  it("refuses a connection without them at once (no silent retrying)", async () => {
    await expect(connectNats(server.url, "kit-nats-auth-test", log)).rejects.toThrow(/Authorization Violation/);
  });
});

describe("a NATS server that requires a token", () => {
  let server: PrivateNatsServer;
  beforeAll(async () => {
    server = await PrivateNatsServer.start(["--auth", "pgw-token-1234"]);
  });
  afterAll(() => server.destroy());

  it("is reached with NATS_TOKEN", async () => {
    const nc = await connectNats(server.url, "kit-nats-auth-test", memoryLog(), loadNatsAuth({ NATS_TOKEN: "pgw-token-1234" }));
    await nc.flush();
    await nc.close();
    expect(nc.isClosed()).toBe(true);
  });
});

describe("natsTarget", () => {
  it("takes credentials out of every server URL, so logs never show them", () => {
    const { servers, options } = natsTarget("nats://u:p%40ss@n1:4222, nats://u:p%40ss@n2:4222");
    expect(servers).toEqual(["nats://n1:4222", "nats://n2:4222"]);
    expect(options).toEqual({ user: "u", pass: "p@ss" });
  });

  it("reads a URL with a user name only as a token, and prefers the credentials of the variables", () => {
    expect(natsTarget("nats://tok@n1:4222").options).toEqual({ token: "tok" });
    expect(natsTarget("nats://u:p@n1:4222", { token: "from-env" }).options).toEqual({ token: "from-env" });
    expect(natsTarget("nats://n1:4222").options).toEqual({});
  });
});

describe("loadNatsAuth", () => {
  const refused = (source: NodeJS.ProcessEnv) => {
    try {
      loadNatsAuth(source);
    } catch (err) {
      return err instanceof ConfigError ? err.message : String(err);
    }
    return "accepted";
  };

  it("needs nothing in local mode (a server without authentication)", () => {
    expect(loadNatsAuth({ LOCAL_MODE: "true" })).toEqual({ user: undefined, pass: undefined, token: undefined, creds: undefined });
  });

  it("refuses to go without credentials outside local mode, naming the variables, unless NATS_URL carries them", () => {
    expect(refused({})).toBe("invalid configuration: NATS_USER and NATS_PASSWORD (or NATS_CREDS_FILE, NATS_TOKEN, or credentials in NATS_URL) are required outside local mode");
    expect(refused({ LOCAL_MODE: "false", NATS_URL: "nats://n1:4222" })).toMatch(/NATS_USER and NATS_PASSWORD .* are required outside local mode/);
    expect(loadNatsAuth({ NATS_URL: "nats://ledger:pw@n1:4222" })).toEqual({ user: undefined, pass: undefined, token: undefined, creds: undefined });
    expect(loadNatsAuth({ NATS_USER: "ledger", NATS_PASSWORD: "pw" })).toMatchObject({ user: "ledger", pass: "pw" });
    expect(loadNatsAuth({ NATS_TOKEN: "t" })).toMatchObject({ token: "t" });
  });

  it("refuses half a user/password pair, two kinds at once, and a creds file it cannot read", () => {
    expect(refused({ NATS_USER: "u" })).toMatch(/NATS_PASSWORD is required/);
    expect(refused({ NATS_PASSWORD: "p" })).toMatch(/NATS_USER is required/);
    expect(refused({ NATS_USER: "u", NATS_PASSWORD: "p", NATS_TOKEN: "t" })).toMatch(/NATS_TOKEN must be the only kind/);
    expect(refused({ NATS_CREDS_FILE: "/nonexistent/unit.creds" })).toMatch(/NATS_CREDS_FILE cannot be read \(ENOENT\)/);
  });
});
