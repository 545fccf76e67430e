import net from "node:net";
import type http from "node:http";
import { Registry } from "prom-client";
import { pollUntil } from "../../../test/support/poll";
import { listen, startProbeServer } from "@pgw/kit/http";
import { createHttpServer } from "@pgw/kit/http";

/** Sends raw bytes and reads the answer until the server closes the connection. */
function rawExchange(port: number, request: string): Promise<{ status: number; headers: string; body: string; raw: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let raw = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => (raw += chunk));
    socket.on("end", () => {
      const split = raw.indexOf("\r\n\r\n");
      const head = raw.slice(0, split);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head.toLowerCase(), body: raw.slice(split + 4), raw });
    });
    socket.on("error", reject);
    socket.write(request);
  });
}

describe("HTTP server: every error answer carries the error body", () => {
  let server: http.Server;
  let port: number;

  beforeAll(async () => {
    server = createHttpServer(
      (req, res) => {
        const text = `served ${req.method} ${req.url}`;
        res.writeHead(200, { "content-type": "text/plain", "content-length": text.length }).end(text);
      },
      { maxHeaderSize: 4096 },
    );
    port = await listen(server, 0, "127.0.0.1");
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it("serves a request whose Expect is not 100-continue instead of an empty 417", async () => {
    const answer = await rawExchange(port, "GET /x HTTP/1.1\r\nHost: a\r\nExpect: foo\r\nConnection: close\r\n\r\n");
    expect(answer).toMatchObject({ status: 200, body: "served GET /x" });
  });

  it("still answers Expect: 100-continue with 100 and then serves the request", async () => {
    const answer = await rawExchange(port, "POST /y HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    expect(answer.raw).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    expect(answer.raw).toContain("served POST /y");
  });

  it("answers unparseable HTTP with 400 validation_error", async () => {
    const answer = await rawExchange(port, "NOT HTTP AT ALL\r\n\r\n");
    expect(answer.status).toBe(400);
    expect(answer.headers).toContain("content-type: application/json");
    expect(JSON.parse(answer.body)).toEqual({ error: { code: "validation_error", message: "malformed HTTP request", details: [] } });
  });

  it("answers headers over the limit with 413 payload_too_large", async () => {
    const answer = await rawExchange(port, `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${"b".repeat(8000)}\r\n\r\n`);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error).toEqual({ code: "payload_too_large", message: "request headers are too large", details: [] });
  });

  it("answers an HTTP/1.1 request without Host with 400 naming the header", async () => {
    const answer = await rawExchange(port, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.details).toEqual([{ field: "host", issue: "is required" }]);
  });

  it("cuts a client that sends its headers too slowly with 400 and the error body", async () => {
    const slow = createHttpServer(() => undefined, { headersTimeoutMs: 300 });
    const slowPort = await listen(slow, 0, "127.0.0.1");
    try {
      const started = Date.now();
      const socket = net.connect(slowPort, "127.0.0.1");
      socket.write("GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ");
      const answer = await new Promise<string>((resolve) => {
        let raw = "";
        socket.setEncoding("utf8").on("data", (c) => (raw += c)).on("close", () => resolve(raw));
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).error).toEqual({ code: "validation_error", message: "request was not received in time", details: [] });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await new Promise((resolve) => slow.close(resolve));
    }
  });

  it("keeps an idle keep-alive connection open past the headers limit, and closes it at its keep-alive timeout", async () => {
    const server = createHttpServer((_req, res) => res.end("ok"), { headersTimeoutMs: 300, keepAliveTimeoutMs: 1500 });
    const serverPort = await listen(server, 0, "127.0.0.1");
    try {
      const socket = net.connect(serverPort, "127.0.0.1");
      let raw = "";
      let closedAt = 0;
      socket.setEncoding("utf8").on("data", (c) => (raw += c)).on("close", () => (closedAt = Date.now()));
      /** Sends a request and waits for its whole answer ("ok"), or for the connection to close. */
      const ask = async () => {
        const before = raw.length;
        socket.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        await pollUntil(() => raw.slice(before), (answer) => answer.endsWith("ok") || closedAt > 0, 5000, 5);
      };
      await ask();
      await new Promise((r) => setTimeout(r, 700)); // the scenario: idle past the 300 ms headers limit; still usable after
      await ask();
      expect(raw.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
      const lastAnswerAt = Date.now();
      expect(await pollUntil(() => closedAt, (at) => at > 0, 5000)).toBeGreaterThanOrEqual(lastAnswerAt + 1400);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("serves HTTP/1.0 without Host, which that version does not require", async () => {
    const answer = await rawExchange(port, "GET /old HTTP/1.0\r\n\r\n");
    expect(answer).toMatchObject({ status: 200, body: "served GET /old" });
  });
});

describe("probe server", () => {
  it("answers a failing /readyz with 503, the failing checks in the header and in the error body", async () => {
    const server = await startProbeServer(0, "127.0.0.1", { accepting: true, checks: { database: async () => false, nats: async () => true } }, new Registry());
    try {
      const { port, address } = server.address() as net.AddressInfo;
      expect(address).toBe("127.0.0.1"); // bound where it was told, not on every interface
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(res.status).toBe(503);
      expect(res.headers.get("x-failing-checks")).toBe("database");
      expect(await res.json()).toEqual({ error: { code: "unavailable", message: "not ready", details: [{ field: "database", issue: "is failing" }] } });
      const live = await fetch(`http://127.0.0.1:${port}/livez`);
      expect(live.status).toBe(204);
      expect(await live.text()).toBe("");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("answers /healthz with the readiness checks (503 naming the failing ones, 204 once they pass) while /livez stays 204, and shows them in unit_ready", async () => {
    let databaseUp = false;
    const server = await startProbeServer(0, "127.0.0.1", { accepting: true, checks: { database: async () => databaseUp } }, new Registry());
    try {
      const { port } = server.address() as net.AddressInfo;
      const probe = async (path: string) => {
        const res = await fetch(`http://127.0.0.1:${port}${path}`);
        return { path, status: res.status, failing: res.headers.get("x-failing-checks"), body: await res.text() };
      };
      const notServing = { status: 503, failing: "database", body: JSON.stringify({ error: { code: "unavailable", message: "not ready", details: [{ field: "database", issue: "is failing" }] } }) };
      expect(await probe("/healthz")).toEqual({ path: "/healthz", ...notServing });
      expect(await probe("/readyz")).toEqual({ path: "/readyz", ...notServing });
      expect(await probe("/livez")).toEqual({ path: "/livez", status: 204, failing: null, body: "" });
      const readiness = async () => (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).split("\n").filter((line) => line.startsWith("unit_read"));
      expect(await readiness()).toEqual(["unit_ready 0", 'unit_readiness_check_failing{check="database"} 1']);
      databaseUp = true;
      for (const path of ["/healthz", "/readyz", "/livez"]) expect(await probe(path)).toEqual({ path, status: 204, failing: null, body: "" });
      expect(await readiness()).toEqual(["unit_ready 1", 'unit_readiness_check_failing{check="database"} 0']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
