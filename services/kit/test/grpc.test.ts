/**
 * The kit's server (gRPC over HTTP/2 and Connect over HTTP/1.1 on one port) and client (Connect
 * over HTTP/1.1, connect-unary-call.ts), both Connect-shaped, on a real port: errors keep their
 * public code and details across the hop, deadlines and cancellation reach the handler, the request
 * id travels, an unreachable peer is `unavailable`, large messages pass, connections age without
 * failing calls, clients of other implementations (grpc-js, Connect's gRPC and Connect transports)
 * talk to the same server, the client reads a peer that is no Connect server as Connect
 * prescribes, and a call on a connection that stopped carrying bytes ends at its deadline.
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@pgw/proto/gen/grpc/health/v1/health_pb";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  GetEvidenceRequestSchema,
  GetEvidenceResponseSchema,
  ReceiptsService,
  type GetEvidenceRequest,
  type GetEvidenceResponse,
} from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import * as grpc from "@grpc/grpc-js";
import type { EventEmitter } from "node:events";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { Registry } from "prom-client";
import { createServiceClient } from "../src/clients";
import { readMessage } from "../src/grpc-server-stream";
import { frame } from "../src/grpc-wire";
import { AppError, fromConnectError } from "../src/errors";
import { registerGrpcHealth } from "../src/grpc-health";
import { startGrpcServer, type GrpcServer } from "../src/grpc-server";
import type { ProbeState } from "../src/health-http";
import { createLogger, currentRequestId, withRequestId } from "../src/logger";

let server: GrpcServer;
let url: string;
const registry = new Registry();
const seen: { requestIds: (string | undefined)[]; aborted: unknown[]; signals: AbortSignal[] } = { requestIds: [], aborted: [], signals: [] };
const probes: ProbeState = { accepting: true, checks: { ready: async () => true } };

/** Resolves when `signal` aborts (with its reason), or after `ms`. */
const abortedWithin = (signal: AbortSignal, ms: number) =>
  new Promise<unknown>((resolve) => {
    const timer = setTimeout(() => resolve("not aborted"), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(signal.reason);
    });
  });

/** A TCP proxy on a free port to `port` of 127.0.0.1: each accepted connection's two sockets, in order. */
async function tcpProxy(port: number): Promise<{ url: string; links: [net.Socket, net.Socket][]; close(): void }> {
  const links: [net.Socket, net.Socket][] = [];
  const proxy = net.createServer((inbound) => {
    const outbound = net.connect(port, "127.0.0.1");
    inbound.pipe(outbound).pipe(inbound);
    inbound.on("error", () => outbound.destroy());
    outbound.on("error", () => inbound.destroy());
    links.push([inbound, outbound]);
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`,
    links,
    close: () => {
      for (const link of links) for (const socket of link) socket.destroy();
      proxy.close();
    },
  };
}

/** How many calls the shared server has ended as cancelled. */
async function cancelledCount(): Promise<number> {
  const text = await registry.metrics();
  const line = text.split("\n").find((l) => l.startsWith("grpc_server_handling_seconds_count{") && l.includes(`code="${Code.Canceled}"`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

beforeAll(async () => {
  server = await startGrpcServer(
    0,
    "127.0.0.1",
    (router) => {
      router.service(ReceiptsService, {
        async getEvidence(req, ctx) {
          seen.requestIds.push(currentRequestId());
          seen.signals.push(ctx.signal);
          if (req.operationId === "invalid") throw new AppError("validation_error", "bad operation", [{ field: "operation_id", issue: "must be a UUID" }]);
          if (req.operationId === "unicode") throw new AppError("validation_error", "сумма 100% больше лимита, 50%2F50");
          if (req.operationId === "bug") throw new Error("secret internals");
          if (req.operationId === "wait") seen.aborted.push(await abortedWithin(ctx.signal, 5000));
          return { status: "complete" };
        },
        async getReceiptFile(req) {
          return { content: new Uint8Array(Number(req.expires)).fill(7), contentType: "application/pdf" };
        },
      });
      registerGrpcHealth(router, probes, [ReceiptsService.typeName]);
    },
    createLogger("grpc-test", "silent"),
    registry,
  );
  url = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server.close(100));

const client = () => createServiceClient(ReceiptsService, url, 2000);

it("carries a handler's public error (code, message, field details) across the hop", async () => {
  const err = await client().getEvidence({ operationId: "invalid" }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  const app = fromConnectError(err);
  expect(app).toMatchObject({ code: "validation_error", message: "bad operation", details: [{ field: "operation_id", issue: "must be a UUID" }] });
});

it("carries a status message with non-ASCII text and percent signs unchanged (gRPC percent-encodes it)", async () => {
  const err = (await client().getEvidence({ operationId: "unicode" }).catch((e: unknown) => e)) as ConnectError;
  expect(err.rawMessage).toBe("сумма 100% больше лимита, 50%2F50");
});

it("refuses a request holding U+0000 in a text field with InvalidArgument naming it, before its handler runs", async () => {
  const calls = seen.requestIds.length;
  const err = await client().getEvidence({ operationId: "op\u0000" }).catch((e: unknown) => e);
  expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  expect(fromConnectError(err)).toMatchObject({ code: "validation_error", details: [{ field: "operationId", issue: "must not contain the U+0000 character" }] });
  expect(seen.requestIds.length).toBe(calls);
});

it("refuses bytes that are no message of the method's input type with InvalidArgument, before its handler runs", async () => {
  const calls = seen.requestIds.length;
  const raw = new grpc.Client(url.replace("http://", ""), grpc.credentials.createInsecure());
  const identity = (b: Buffer) => b;
  const status = await new Promise<grpc.ServiceError | null>((resolve) =>
    raw.makeUnaryRequest(`/${ReceiptsService.typeName}/GetEvidence`, identity, identity, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), (err) => resolve(err)),
  );
  raw.close();
  expect({ code: status?.code, details: status?.details }).toEqual({ code: grpc.status.INVALID_ARGUMENT, details: "the request is not a valid pgw.receipts.v1.GetEvidenceRequest message" });
  expect(seen.requestIds.length).toBe(calls);
});

it("answers an unexpected failure as internal without its message", async () => {
  const err = (await client().getEvidence({ operationId: "bug" }).catch((e: unknown) => e)) as ConnectError;
  expect(err.code).toBe(Code.Internal);
  expect(err.rawMessage).not.toContain("secret");
  expect(fromConnectError(err).code).toBe("internal");
});

it("propagates the caller's request id and answers the message", async () => {
  const answer = await withRequestId("req-123", () => client().getEvidence({ operationId: "ok" }));
  expect(answer.status).toBe("complete");
  expect(seen.requestIds.at(-1)).toBe("req-123");
});

it("passes the deadline to the handler, whose signal aborts when it expires", async () => {
  const started = Date.now();
  const err = (await client().getEvidence({ operationId: "wait" }, { timeoutMs: 200 }).catch((e: unknown) => e)) as ConnectError;
  expect(err.code).toBe(Code.DeadlineExceeded);
  expect(Date.now() - started).toBeLessThan(1500);
  await new Promise((r) => setTimeout(r, 300));
  // The caller's deadline passes first and cancels the stream; a loaded machine can delay the
  // request enough that this side sees a plain cancel. Either way the handler learns it is over.
  expect([Code.DeadlineExceeded, Code.Canceled]).toContain((seen.aborted.at(-1) as ConnectError).code);
});

it("never aborts the signal of a call that answered (its stream closes after the answer)", async () => {
  await client().getEvidence({ operationId: "ok" });
  await new Promise((r) => setTimeout(r, 200));
  expect(seen.signals.at(-1)!.aborted).toBe(false);
});

it("cancels the call when the caller's signal aborts, and the handler learns it", async () => {
  const caller = new AbortController();
  setTimeout(() => caller.abort(), 100);
  const err = (await client().getEvidence({ operationId: "wait" }, { signal: caller.signal }).catch((e: unknown) => e)) as ConnectError;
  expect(err.code).toBe(Code.Canceled);
  await new Promise((r) => setTimeout(r, 300));
  expect(seen.aborted.at(-1)).toMatchObject({ code: Code.Canceled });
});

describe.each([
  ["Connect's gRPC transport (HTTP/2)", () => createGrpcTransport({ baseUrl: url })],
  ["Connect's Connect transport (HTTP/1.1, binary)", () => createConnectTransport({ baseUrl: url, httpVersion: "1.1", useBinaryFormat: true })],
  ["Connect's Connect transport (HTTP/1.1, JSON)", () => createConnectTransport({ baseUrl: url, httpVersion: "1.1" })],
  ["Connect's Connect transport (HTTP/2, binary)", () => createConnectTransport({ baseUrl: url, httpVersion: "2", useBinaryFormat: true })],
])("a client on %s", (_, transport) => {
  const other = () => createClient(ReceiptsService, transport());

  it("gets the answer, and the handler the request id it sent", async () => {
    const answer = await other().getEvidence({ operationId: "ok" }, { headers: { "x-request-id": "req-other" } });
    expect(answer.status).toBe("complete");
    expect(seen.requestIds.at(-1)).toBe("req-other");
  });

  it("gets a handler's public error: code, message with non-ASCII text, and field details", async () => {
    const err = await other().getEvidence({ operationId: "invalid" }).catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect(fromConnectError(err)).toMatchObject({ code: "validation_error", message: "bad operation", details: [{ field: "operation_id", issue: "must be a UUID" }] });
    const unicode = (await other().getEvidence({ operationId: "unicode" }).catch((e: unknown) => e)) as ConnectError;
    expect(unicode.rawMessage).toBe("сумма 100% больше лимита, 50%2F50");
  });

  it("passes its deadline to the handler, whose signal aborts", async () => {
    const before = seen.aborted.length;
    const err = (await other().getEvidence({ operationId: "wait" }, { timeoutMs: 200 }).catch((e: unknown) => e)) as ConnectError;
    expect(err.code).toBe(Code.DeadlineExceeded);
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.aborted).toHaveLength(before + 1);
    expect([Code.DeadlineExceeded, Code.Canceled]).toContain((seen.aborted.at(-1) as ConnectError).code);
  });

  it("cancels the call when its signal aborts, and the handler learns it", async () => {
    const before = seen.aborted.length;
    const caller = new AbortController();
    setTimeout(() => caller.abort(), 100);
    const err = (await other().getEvidence({ operationId: "wait" }, { signal: caller.signal }).catch((e: unknown) => e)) as ConnectError;
    expect(err.code).toBe(Code.Canceled);
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.aborted).toHaveLength(before + 1);
    expect(seen.aborted.at(-1)).toMatchObject({ code: Code.Canceled });
  });
});

it("reports a peer that is not listening as unavailable", async () => {
  const down = await startGrpcServer(0, "127.0.0.1", () => undefined, createLogger("down", "silent"), new Registry());
  await down.close(0);
  const err = await createServiceClient(ReceiptsService, `http://127.0.0.1:${down.port}`, 2000)
    .getEvidence({ operationId: "x" })
    .catch((e: unknown) => e);
  expect(fromConnectError(err).code).toBe("unavailable");
});

it("answers unimplemented for a method the service does not provide", async () => {
  const err = (await client().uploadConfirmation({ shopId: "s" }).catch((e: unknown) => e)) as ConnectError;
  expect(err.code).toBe(Code.Unimplemented);
});

it("carries messages larger than gRPC's usual 4 MiB limit (a 10 MiB receipt file)", async () => {
  const size = 11 * 1024 * 1024;
  const file = await client().getReceiptFile({ itemId: "i", expires: BigInt(size) });
  expect(file.content.byteLength).toBe(size);
  expect(file.content[size - 1]).toBe(7);
});

it("serves grpc.health.v1 to a client of another gRPC implementation, unary and streaming", async () => {
  const health = createClient(Health, createGrpcTransport({ baseUrl: url }));
  expect((await health.check({ service: "" })).status).toBe(Status.SERVING);
  expect((await health.check({ service: ReceiptsService.typeName })).status).toBe(Status.SERVING);
  const unknown = (await health.check({ service: "nope" }).catch((e: unknown) => e)) as ConnectError;
  expect(unknown.code).toBe(Code.NotFound);

  const watching = new AbortController();
  const statuses: Status[] = [];
  const ended = await (async () => {
    for await (const update of health.watch({ service: "" }, { signal: watching.signal })) {
      statuses.push(update.status);
      if (statuses.length === 1) probes.accepting = false;
      if (statuses.length === 2) watching.abort();
    }
  })().catch((e: unknown) => e);
  probes.accepting = true;
  expect((ended as ConnectError).code).toBe(Code.Canceled);
  expect(statuses).toEqual([Status.SERVING, Status.NOT_SERVING]);
});

/** GetEvidence through a plain @grpc/grpc-js client of `target` (host:port): the error, or the answer. */
function grpcJsEvidence(target: string): { call(operationId: string): Promise<{ err: grpc.ServiceError | null; answer?: GetEvidenceResponse }>; close(): void } {
  const client = new grpc.Client(target, grpc.credentials.createInsecure());
  const call = (operationId: string) =>
    new Promise<{ err: grpc.ServiceError | null; answer?: GetEvidenceResponse }>((resolve) =>
      client.makeUnaryRequest(
        `/${ReceiptsService.typeName}/GetEvidence`,
        (m: GetEvidenceRequest) => Buffer.from(toBinary(GetEvidenceRequestSchema, m)),
        (b: Buffer) => fromBinary(GetEvidenceResponseSchema, b),
        create(GetEvidenceRequestSchema, { operationId }),
        (err, answer) => resolve({ err, answer }),
      ),
    );
  return { call, close: () => client.close() };
}

// Calls race each connection's ageing: over HTTP/1.1 the answer that says `Connection: close` ends
// it, over HTTP/2 a stream the server refuses with its GOAWAY is sent again on a new connection.
it.each([
  [
    "the kit's client (Connect, HTTP/1.1)",
    (proxyUrl: string) => {
      const aged = createServiceClient(ReceiptsService, proxyUrl, 2000);
      return { call: (operationId: string) => aged.getEvidence({ operationId }).then((a) => a.status, (e: unknown) => String(e)), close: () => undefined };
    },
  ],
  [
    "a @grpc/grpc-js client (gRPC, HTTP/2)",
    (proxyUrl: string) => {
      const aged = grpcJsEvidence(proxyUrl.replace("http://", ""));
      return { call: (operationId: string) => aged.call(operationId).then(({ err, answer }) => (err ? String(err) : (answer?.status ?? ""))), close: aged.close };
    },
  ],
])("closes connections after their maximum age, so %s reconnects (and spreads over new replicas) without a call failing", async (_, clientOf) => {
  const aging = await startGrpcServer(
    0,
    "127.0.0.1",
    (router) => router.service(ReceiptsService, { getEvidence: async () => ({ status: "complete" }) }),
    createLogger("aging", "silent"),
    new Registry(),
    { maxConnectionAgeMs: 200 },
  );
  // A TCP proxy in front of the server counts the connections clients open.
  const proxy = await tcpProxy(aging.port);
  const client = clientOf(proxy.url);
  try {
    const outcomes: string[] = [];
    const until = Date.now() + 1500;
    // Eight callers back to back.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < until) outcomes.push(await client.call("x"));
      }),
    );
    expect(outcomes.length).toBeGreaterThan(100);
    expect(outcomes.filter((o) => o !== "complete")).toEqual([]);
    expect(proxy.links.length).toBeGreaterThanOrEqual(3);
  } finally {
    client.close();
    proxy.close();
    await aging.close(100);
  }
});

describe("a peer that is no Connect server", () => {
  let peer: http.Server;
  let peerUrl: string;
  beforeAll(async () => {
    peer = http.createServer((req, res) => {
      const path = req.url ?? "";
      if (path.endsWith("/GetEvidence")) res.writeHead(404).end();
      else if (path.endsWith("/GetReceiptFile")) {
        // Promises ten bytes, sends two, then closes the connection.
        res.writeHead(200, { "content-type": "application/proto", "content-length": 10 });
        res.write(Buffer.from([1, 2]), () => res.destroy());
      } else if (path.endsWith("/Check")) {
        // A proxy's HTML error page.
        res.writeHead(503, { "content-type": "text/html" }).end("<html>down</html>");
      } else {
        // A body larger than any the kit accepts, without a length up front.
        res.writeHead(200, { "content-type": "application/proto" });
        const chunk = Buffer.alloc(1024 * 1024);
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once("drain", pump);
        };
        pump();
      }
    });
    await new Promise<void>((r) => peer.listen(0, "127.0.0.1", r));
    peerUrl = `http://127.0.0.1:${(peer.address() as net.AddressInfo).port}`;
  });
  afterAll(() => {
    peer.closeAllConnections();
    return new Promise<void>((r) => peer.close(() => r()));
  });

  it("maps an HTTP status without a Connect error body as Connect does (404 is unimplemented, 503 unavailable)", async () => {
    const err = (await createServiceClient(ReceiptsService, peerUrl, 2000).getEvidence({ operationId: "x" }).catch((e: unknown) => e)) as ConnectError;
    expect(err.code).toBe(Code.Unimplemented);
    expect(err.rawMessage).toBe("the peer answered HTTP 404");
    const html = await createServiceClient(Health, peerUrl, 2000).check({}).catch((e: unknown) => e);
    expect(fromConnectError(html).code).toBe("unavailable");
  });

  it("reports a connection lost mid-answer as unavailable", async () => {
    const err = await createServiceClient(ReceiptsService, peerUrl, 2000).getReceiptFile({ itemId: "i" }).catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe(Code.Unavailable);
    expect(fromConnectError(err).code).toBe("unavailable");
  });

  it("stops reading an answer larger than the kit's limit, with resource_exhausted", async () => {
    const err = (await createServiceClient(ReceiptsService, peerUrl, 10_000).uploadConfirmation({ shopId: "s" }).catch((e: unknown) => e)) as ConnectError;
    expect(err.code).toBe(Code.ResourceExhausted);
  });
});

describe("the server's side of gRPC over HTTP/2", () => {
  /** One raw HTTP/2 request to the shared server: the answer's headers, trailers and body. */
  const raw = (headers: http2.OutgoingHttpHeaders, body: Buffer) =>
    new Promise<{ headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const session = http2.connect(url);
      session.on("error", reject);
      const stream = session.request({ ":method": "POST", "content-type": "application/grpc", te: "trailers", ...headers });
      const answer = { headers: {} as http2.IncomingHttpHeaders, trailers: {} as http2.IncomingHttpHeaders, body: [] as Buffer[] };
      stream.on("response", (h) => (answer.headers = h));
      stream.on("trailers", (t) => (answer.trailers = t));
      stream.on("data", (c: Buffer) => answer.body.push(c));
      stream.on("close", () => {
        session.close();
        resolve({ headers: answer.headers, trailers: answer.trailers, body: Buffer.concat(answer.body) });
      });
      stream.end(body);
    });
  const evidencePath = `/${ReceiptsService.typeName}/GetEvidence`;

  it("answers a grpc-js client: the message, and an error's public code in trailers", async () => {
    const other = grpcJsEvidence(url.replace("http://", ""));
    try {
      expect((await other.call("ok")).answer?.status).toBe("complete");
      const { err } = await other.call("invalid");
      expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err?.details).toBe("bad operation");
      expect(err?.metadata.get("pgw-error-code")).toEqual(["validation_error"]);
    } finally {
      other.close();
    }
  });

  it("answers an unknown method unimplemented, a compressed request unimplemented, and a request that is neither gRPC nor Connect 415", async () => {
    const message = Buffer.from(toBinary(GetEvidenceRequestSchema, create(GetEvidenceRequestSchema, { operationId: "ok" })));
    const framed = Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);
    const unknown = await raw({ ":path": "/pgw.nope.v1.Nope/Call" }, framed);
    expect(unknown.headers["grpc-status"]).toBe(String(grpc.status.UNIMPLEMENTED));
    expect(decodeURIComponent(String(unknown.headers["grpc-message"]))).toBe("unknown method /pgw.nope.v1.Nope/Call");
    const compressed = await raw({ ":path": evidencePath, "grpc-encoding": "gzip" }, framed);
    expect(compressed.headers["grpc-status"]).toBe(String(grpc.status.UNIMPLEMENTED));
    const text = await raw({ ":path": evidencePath, "content-type": "text/plain" }, Buffer.from("{}"));
    expect(text.headers[":status"]).toBe(415);
    const ok = await raw({ ":path": evidencePath }, framed);
    expect({ status: ok.headers[":status"], grpcStatus: ok.trailers["grpc-status"], body: fromBinary(GetEvidenceResponseSchema, ok.body.subarray(5)).status }).toEqual({
      status: 200,
      grpcStatus: "0",
      body: "complete",
    });
  });

  it("answers a body that is not one whole message invalid_argument, before the handler runs", async () => {
    const calls = seen.requestIds.length;
    const truncated = await raw({ ":path": evidencePath }, Buffer.from([0, 0, 0, 0, 9, 1]));
    expect(truncated.headers["grpc-status"]).toBe(String(grpc.status.INVALID_ARGUMENT));
    expect(seen.requestIds.length).toBe(calls);
  });

  it("ends a call whose caller resets before its request is complete as cancelled, without running the handler", async () => {
    const before = await cancelledCount();
    const calls = seen.requestIds.length;
    const session = http2.connect(url);
    const stream = session.request({ ":method": "POST", ":path": evidencePath, "content-type": "application/grpc", te: "trailers" });
    stream.on("error", () => undefined);
    stream.write(Buffer.from([0, 0, 0, 0, 9, 1]));
    await new Promise((r) => setTimeout(r, 50));
    stream.destroy(); // RST_STREAM without ending the request (close() would end it first)
    await new Promise((r) => setTimeout(r, 100));
    session.close();
    expect(await cancelledCount()).toBe(before + 1);
    expect(seen.requestIds.length).toBe(calls);
  });

  it("lets a call in flight finish when it closes, refuses new connections, and ends a call that outlives the grace", async () => {
    const slow = await startGrpcServer(
      0,
      "127.0.0.1",
      (router) =>
        router.service(ReceiptsService, {
          getEvidence: async (req) => {
            await new Promise((r) => setTimeout(r, Number(req.operationId)));
            return { status: "complete" };
          },
        }),
      createLogger("slow", "silent"),
      new Registry(),
    );
    const slowUrl = `http://127.0.0.1:${slow.port}`;
    const finishing = createServiceClient(ReceiptsService, slowUrl, 5000).getEvidence({ operationId: "300" });
    const outliving = createServiceClient(ReceiptsService, slowUrl, 5000)
      .getEvidence({ operationId: "3000" })
      .catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await slow.close(800);
    const closedAfter = Date.now() - started;
    expect((await finishing).status).toBe("complete");
    expect(fromConnectError(await outliving).code).toBe("unavailable");
    expect(closedAfter).toBeGreaterThanOrEqual(700);
    expect(closedAfter).toBeLessThan(2000);
    const late = await createServiceClient(ReceiptsService, slowUrl, 2000)
      .getEvidence({ operationId: "0" })
      .catch((e: unknown) => e);
    expect(fromConnectError(late).code).toBe("unavailable");
  });
});

describe("the server's side of Connect", () => {
  const evidencePath = `/${ReceiptsService.typeName}/GetEvidence`;
  /** One HTTP/1.1 request on its own connection to the shared server: the answer's status, headers and body. */
  const raw = (path: string, headers: http.OutgoingHttpHeaders, body: Buffer | string, method = "POST") =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const request = http.request(`${url}${path}`, { method, headers, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (c: Buffer) => chunks.push(c));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString() }));
      });
      request.on("error", reject);
      request.end(body);
    });
  const json = { "content-type": "application/json" };
  const proto = { "content-type": "application/proto" };

  it("answers JSON (as curl would send it) in JSON, and an error as Connect's JSON error body with our metadata as headers", async () => {
    const ok = await raw(evidencePath, json, JSON.stringify({ operationId: "ok", unknownField: 1 }));
    expect({ status: ok.status, type: ok.headers["content-type"], body: JSON.parse(ok.body) }).toEqual({ status: 200, type: "application/json", body: { status: "complete" } });
    const invalid = await raw(evidencePath, { ...json, "connect-protocol-version": "1" }, JSON.stringify({ operationId: "invalid" }));
    expect({ status: invalid.status, body: JSON.parse(invalid.body), code: invalid.headers["pgw-error-code"] }).toEqual({
      status: 400,
      body: { code: "invalid_argument", message: "bad operation" },
      code: "validation_error",
    });
  });

  it("refuses what is no Connect unary call of a method served here: unknown 404, GET 405, another content type 415, a streaming method 415, compression and a bad timeout by Connect error", async () => {
    expect((await raw("/pgw.nope.v1.Nope/Call", proto, "")).status).toBe(404);
    expect((await raw(evidencePath, proto, "", "GET")).status).toBe(405);
    expect((await raw(evidencePath, { "content-type": "text/plain" }, "hello")).status).toBe(415);
    expect((await raw(`/${Health.typeName}/Watch`, proto, "")).status).toBe(415);
    const compressed = await raw(evidencePath, { ...proto, "content-encoding": "gzip" }, "");
    expect({ status: compressed.status, code: JSON.parse(compressed.body).code }).toEqual({ status: 501, code: "unimplemented" });
    const timeout = await raw(evidencePath, { ...proto, "connect-timeout-ms": "soon" }, "");
    expect({ status: timeout.status, code: JSON.parse(timeout.body).code }).toEqual({ status: 400, code: "invalid_argument" });
  });

  it("answers a body that is no message of the method's input type invalid_argument, and one over the limit resource_exhausted, before the handler runs", async () => {
    const calls = seen.requestIds.length;
    const bytes = await raw(evidencePath, proto, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]));
    expect({ status: bytes.status, body: JSON.parse(bytes.body) }).toEqual({ status: 400, body: { code: "invalid_argument", message: "the request is not a valid pgw.receipts.v1.GetEvidenceRequest message" } });
    const text = await raw(evidencePath, json, "{not json");
    expect(text.status).toBe(400);
    const huge = await new Promise<{ status: number; connection?: string }>((resolve, reject) => {
      const request = http.request(`${url}${evidencePath}`, { method: "POST", headers: { ...proto, "content-length": 33 * 1024 * 1024 }, agent: false }, (response) => {
        resolve({ status: response.statusCode ?? 0, connection: response.headers.connection });
        request.destroy();
      });
      request.on("error", reject);
      request.write(Buffer.alloc(1024));
    });
    expect(huge).toEqual({ status: 429, connection: "close" });
    expect(seen.requestIds.length).toBe(calls);
  });

  it("serves Connect over HTTP/2 too, and ends a call whose caller resets its stream mid-request as cancelled, without running the handler", async () => {
    const session = http2.connect(url);
    try {
      const call = (body: Buffer, end: boolean) => {
        const stream = session.request({ ":method": "POST", ":path": evidencePath, "content-type": "application/json" });
        stream.on("error", () => undefined);
        if (end) stream.end(body);
        else stream.write(body);
        return stream;
      };
      const answered = await new Promise<{ status: unknown; body: string }>((resolve) => {
        const stream = call(Buffer.from(JSON.stringify({ operationId: "ok" })), true);
        let status: unknown;
        let body = "";
        stream.on("response", (h) => (status = h[":status"]));
        stream.on("data", (c: Buffer) => (body += c.toString()));
        stream.on("close", () => resolve({ status, body }));
      });
      expect(answered).toEqual({ status: 200, body: JSON.stringify({ status: "complete" }) });
      const before = await cancelledCount();
      const calls = seen.requestIds.length;
      const partial = call(Buffer.from('{"operationId":'), false);
      await new Promise((r) => setTimeout(r, 50));
      partial.destroy(); // RST_STREAM without ending the request
      await new Promise((r) => setTimeout(r, 100));
      expect(await cancelledCount()).toBe(before + 1);
      expect(seen.requestIds.length).toBe(calls);
    } finally {
      session.close();
    }
  });

  it("tells HTTP/1.1 from HTTP/2 even when the first bytes arrive one at a time", async () => {
    const socket = net.connect(server.port, "127.0.0.1");
    const answer = new Promise<string>((resolve) => {
      let text = "";
      socket.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes("complete")) resolve(text);
      });
    });
    const body = JSON.stringify({ operationId: "ok" });
    const request = `POST ${evidencePath} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    try {
      // "P" could open either protocol's first line ("POST" or HTTP/2's "PRI *"): the server waits.
      socket.write(request.slice(0, 1));
      await new Promise((r) => setTimeout(r, 50));
      socket.write(request.slice(1));
      expect(await answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\{"status":"complete"\}$/);
    } finally {
      socket.destroy();
    }
  });

  it("ends a call whose caller closes the connection before its request is complete as cancelled, without running the handler", async () => {
    const before = await cancelledCount();
    const calls = seen.requestIds.length;
    const request = http.request(`${url}${evidencePath}`, { method: "POST", headers: { ...proto, "content-length": 100 }, agent: false });
    request.on("error", () => undefined);
    request.write(Buffer.from([10, 2]));
    await new Promise((r) => setTimeout(r, 50));
    request.destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect(await cancelledCount()).toBe(before + 1);
    expect(seen.requestIds.length).toBe(calls);
  });
});

describe("the client's connection", () => {
  it("closes a connection that stops carrying bytes (a peer gone without closing it) when a call's deadline passes, so the next call gets a new one", async () => {
    // A TCP proxy whose existing connections can be frozen: nothing passes, nothing is closed.
    const proxy = await tcpProxy(server.port);
    const proxied = createServiceClient(ReceiptsService, proxy.url, 5000);
    try {
      expect((await proxied.getEvidence({ operationId: "ok" })).status).toBe("complete");
      for (const [inbound, outbound] of proxy.links) {
        inbound.unpipe(outbound);
        outbound.unpipe(inbound);
        inbound.pause();
        outbound.pause();
      }
      const frozen = (await proxied.getEvidence({ operationId: "ok" }, { timeoutMs: 300 }).catch((e: unknown) => e)) as ConnectError;
      expect(frozen.code).toBe(Code.DeadlineExceeded);
      expect((await proxied.getEvidence({ operationId: "ok" })).status).toBe("complete");
      expect(proxy.links.length).toBe(2);
    } finally {
      proxy.close();
    }
  });

  it("keeps its connections open between calls (HTTP/1.1 keep-alive), opening one per call in flight", async () => {
    const proxy = await tcpProxy(server.port);
    const pooled = createServiceClient(ReceiptsService, proxy.url, 5000);
    try {
      for (let i = 0; i < 20; i++) expect((await pooled.getEvidence({ operationId: "ok" })).status).toBe("complete");
      expect(proxy.links.length).toBe(1);
      await Promise.all(Array.from({ length: 3 }, () => pooled.getEvidence({ operationId: "ok" })));
      expect(proxy.links.length).toBe(3);
    } finally {
      proxy.close();
    }
  });

  it("lets a call stay silent on its connection for longer than the pool's idle timeout (4 s), as an allocation may", async () => {
    const slow = await startGrpcServer(
      0,
      "127.0.0.1",
      (router) =>
        router.service(ReceiptsService, {
          getEvidence: async () => {
            await new Promise((r) => setTimeout(r, 4500));
            return { status: "complete" };
          },
        }),
      createLogger("silent-call", "silent"),
      new Registry(),
    );
    try {
      const answer = await createServiceClient(ReceiptsService, `http://127.0.0.1:${slow.port}`, 10_000).getEvidence({ operationId: "x" });
      expect(answer.status).toBe("complete");
    } finally {
      await slow.close(100);
    }
  });

  it("ends a call at its deadline when the peer takes the connection but never answers", async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const started = Date.now();
      const err = (await createServiceClient(ReceiptsService, `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, 300)
        .getEvidence({ operationId: "ok" })
        .catch((e: unknown) => e)) as ConnectError;
      expect(err.code).toBe(Code.DeadlineExceeded);
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      silent.close();
    }
  });

  it("sends a request larger than gRPC's usual 4 MiB limit (an 11 MiB confirmation upload)", async () => {
    let received = 0;
    const uploads = await startGrpcServer(
      0,
      "127.0.0.1",
      (router) =>
        router.service(ReceiptsService, {
          uploadConfirmation: async (req) => {
            received = req.content.byteLength;
            return {};
          },
        }),
      createLogger("uploads", "silent"),
      new Registry(),
    );
    try {
      const size = 11 * 1024 * 1024;
      await createServiceClient(ReceiptsService, `http://127.0.0.1:${uploads.port}`, 10_000).uploadConfirmation({ shopId: "s", content: new Uint8Array(size).fill(1) });
      expect(received).toBe(size);
    } finally {
      await uploads.close(100);
    }
  });
});

// A closed HTTP/2 stream can stay reachable until the next full collection. Listeners left on it
// would keep each call's objects alive that long, filling the old generation and making full collections (the read tail's pauses)
// come more often.
describe("a gRPC call's stream, once done, holds none of the call's listeners", () => {
  type Listener = (...args: unknown[]) => void;
  /** Records the listeners code in `file` adds to `emitter` (Node adds its own); `left()` names the events of those still attached. */
  function listenersAddedTo(emitter: EventEmitter, file: string): { left(): (string | symbol)[] } {
    const added: [string | symbol, Listener][] = [];
    for (const method of ["on", "once", "addListener"] as const) {
      const original = emitter[method].bind(emitter);
      emitter[method] = (event: string | symbol, listener: Listener) => {
        // The caller's frame is the second below this one.
        if (new Error().stack?.split("\n")[2]?.includes(file)) added.push([event, listener]);
        return original(event, listener);
      };
    }
    return { left: () => added.filter(([event, listener]) => emitter.listeners(event).includes(listener)).map(([event]) => event) };
  }

  it("on the server, once the request is read", async () => {
    const server = http2.createServer();
    const read = new Promise<{ message: Buffer; left: (string | symbol)[] }>((resolve, reject) =>
      server.on("stream", (stream) => {
        const tracked = listenersAddedTo(stream, "grpc-server-stream");
        readMessage(stream).then((message) => {
          resolve({ message, left: tracked.left() });
          stream.respond({ ":status": 200 }, { endStream: true });
        }, reject);
      }),
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const session = http2.connect(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
    try {
      session.request({ ":method": "POST", "content-type": "application/grpc" }).end(frame(Buffer.from("hello")));
      const { message, left } = await read;
      expect(message.toString()).toBe("hello");
      expect(left).toEqual([]);
    } finally {
      session.close();
      server.close();
    }
  });
});
