/**
 * The webhook HTTP connector against real local servers: the SSRF guard outside local mode
 * (checked addresses only, resolution done by the connector), no redirects, the deadline and the
 * response size cap.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpConnector, type WebhookRequest } from "../src/connectors/webhook-http";

let server: http.Server;
let port: number;
const hits: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits.push(req.url ?? "");
    req.resume();
    if (req.url === "/redirect") return void res.writeHead(302, { location: "/target" }).end();
    if (req.url === "/hang") return; // never answers
    if (req.url === "/big") {
      res.writeHead(200);
      const timer = setInterval(() => res.write(Buffer.alloc(64 * 1024, "y")), 1);
      res.on("close", () => clearInterval(timer));
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("ok from " + req.url);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => hits.splice(0));

const req = (url: string, timeoutMs = 2000): WebhookRequest => ({ url, headers: { "content-type": "application/json" }, body: "{}", timeoutMs });

describe("outside local mode", () => {
  const connector = createHttpConnector({
    localMode: false,
    // A name server under the test's control: what the connector resolves is all it may use.
    resolve: async (host) => ({ "loopback.example.test": ["127.0.0.1"], "mixed.example.test": ["93.184.216.34", "10.0.0.7"], "private6.example.test": ["fd00::1"], "public.example.test": ["93.184.216.34"] })[host] ?? [],
  });
  afterAll(() => connector.close());

  it.each([
    ["http://127.0.0.1:PORT/x", "must use HTTPS"],
    ["https://127.0.0.1:PORT/x", "127.0.0.1 is not allowed"],
    ["https://127.0.0.1:1/x", "127.0.0.1 is not allowed"],
    ["https://[::1]:1/x", "::1 is not allowed"],
    ["https://169.254.169.254/latest/meta-data", "169.254.169.254 is not allowed"],
    ["https://loopback.example.test:1/x", "resolves to 127.0.0.1"],
    ["https://mixed.example.test/x", "resolves to 10.0.0.7"],
    ["https://private6.example.test/x", "resolves to fd00::1"],
  ])("refuses %s before connecting", async (url, reason) => {
    const res = await connector.post(req(url.replace("PORT", String(port))));
    expect(res.statusCode).toBeUndefined();
    expect(res.error).toMatch(/^refused: /);
    expect(res.error).toContain(reason);
    expect(hits).toEqual([]);
  });

  it("refuses a name the system resolver maps to loopback (localhost) and never reaches the server", async () => {
    const real = createHttpConnector({ localMode: false });
    const res = await real.post(req(`https://localhost:${port}/x`));
    real.close();
    expect(res.error).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1)/);
    expect(hits).toEqual([]);
  });

  it("lets a public address through the guard (the connection itself is attempted)", async () => {
    const res = await connector.post(req("https://public.example.test/x", 300));
    expect(res.error).not.toMatch(/^refused/);
  });
});

describe("in local mode", () => {
  const connector = createHttpConnector({ localMode: true, responseCapBytes: 256 });
  afterAll(() => connector.close());

  it("allows plain HTTP to loopback and reads the answer", async () => {
    const res = await connector.post(req(`http://127.0.0.1:${port}/hook`));
    expect(res).toMatchObject({ statusCode: 200, snippet: "ok from /hook", error: "" });
    expect(hits).toEqual(["/hook"]);
  });

  it("does not follow redirects", async () => {
    const res = await connector.post(req(`http://127.0.0.1:${port}/redirect`));
    expect(res.statusCode).toBe(302);
    expect(hits).toEqual(["/redirect"]);
  });

  it("gives up at the deadline when the receiver never answers", async () => {
    const started = Date.now();
    const res = await connector.post(req(`http://127.0.0.1:${port}/hang`, 300));
    expect(res.statusCode).toBeUndefined();
    expect(res.error).toBe("timeout after 300 ms");
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("reads at most the cap of an endless body and keeps the status", async () => {
    const res = await connector.post(req(`http://127.0.0.1:${port}/big`, 5000));
    expect(res.statusCode).toBe(200);
    expect(res.snippet).toBe("y".repeat(256));
    expect(res.latencyMs).toBeLessThan(1000);
  });

  it("stops at once when aborted", async () => {
    const ac = new AbortController();
    const pending = connector.post({ ...req(`http://127.0.0.1:${port}/hang`, 5000), signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    expect(await pending).toMatchObject({ statusCode: undefined, error: "aborted: notifier stopping" });
  });
});
