/**
 * The kit's RPC server (connect-node's adapter with the kit's interceptors, reflection, one port
 * for HTTP/1.1 and h2c, connection ageing, graceful close) on a real port, called by the kit's own
 * peer transport and by Connect's gRPC, gRPC-Web and Connect transports and @grpc/grpc-js: errors
 * keep their public code and details, bad text is refused before the handler, deadlines and
 * cancels reach the handler, the request id travels both ways, connections age without failing a
 * call, and reflection answers what grpcurl and buf curl ask.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@pgw/proto/gen/grpc/health/v1/health_pb";
import { ServerReflection, type ServerReflectionRequest } from "@pgw/proto/gen/grpc/reflection/v1/reflection_pb";
import { ServerReflection as ServerReflectionV1alpha } from "@pgw/proto/gen/grpc/reflection/v1alpha/reflection_pb";
import {
  GetEvidenceRequestSchema,
  GetEvidenceResponseSchema,
  ReceiptsService,
  type GetEvidenceRequest,
  type GetEvidenceResponse,
} from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import http from "node:http";
import net from "node:net";
import { Registry } from "prom-client";
import { AppError } from "@pgw/contracts";
import { fromConnectError } from "@pgw/kit/rpc";
import { registerGrpcHealth } from "@pgw/kit/rpc";
import type { ProbeState } from "@pgw/kit/http";
import { createLogger, currentRequestId, withRequestId } from "@pgw/kit/runtime";
import { createPeerTransport } from "@pgw/kit/rpc";
import { startRpcServer, type RpcServer } from "@pgw/kit/rpc";
import { pollUntil } from "../../../test/support/poll";

let server: RpcServer;
let url: string;
const registry = new Registry();
const seen: { requestIds: (string | undefined)[]; aborted: unknown[] } = { requestIds: [], aborted: [] };
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

/** A TCP proxy on a free port to `port` of 127.0.0.1, counting the connections clients open. */
async function countingProxy(port: number): Promise<{ url: string; connections(): number; close(): void }> {
  const sockets: net.Socket[] = [];
  let connections = 0;
  const proxy = net.createServer((inbound) => {
    connections++;
    const outbound = net.connect(port, "127.0.0.1");
    inbound.pipe(outbound).pipe(inbound);
    inbound.on("error", () => outbound.destroy());
    outbound.on("error", () => inbound.destroy());
    sockets.push(inbound, outbound);
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`,
    connections: () => connections,
    close: () => {
      for (const socket of sockets) socket.destroy();
      proxy.close();
    },
  };
}

/** How many calls of `method` the shared server has counted with `code`. */
async function countedCalls(method: string, code: string): Promise<number> {
  const text = await registry.metrics();
  const line = text.split("\n").find((l) => l.startsWith(`grpc_server_handling_seconds_count{method="${method}",code="${code}"}`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

beforeAll(async () => {
  server = await startRpcServer(
    0,
    "127.0.0.1",
    (router) => {
      router.service(ReceiptsService, {
        async getEvidence(req, ctx) {
          seen.requestIds.push(currentRequestId());
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
    createLogger("rpc-server-test", "silent"),
    registry,
  );
  url = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server.close(100));

const client = () => createClient(ReceiptsService, createPeerTransport(url, { timeoutMs: 2000 }));

describe.each([
  ["the kit's peer transport (Connect, HTTP/1.1, binary)", () => createPeerTransport(url, { timeoutMs: 2000 })],
  ["Connect's Connect transport (HTTP/1.1, JSON)", () => createConnectTransport({ baseUrl: url, httpVersion: "1.1" })],
  ["Connect's Connect transport (HTTP/2, binary)", () => createConnectTransport({ baseUrl: url, httpVersion: "2", useBinaryFormat: true })],
  ["Connect's gRPC transport (HTTP/2)", () => createGrpcTransport({ baseUrl: url })],
  ["Connect's gRPC-Web transport (HTTP/1.1)", () => createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" })],
])("a client on %s", (_, transport: () => Transport) => {
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
    // The handler records how its wait ended: aborted, or "not aborted" after 5 s.
    expect(await pollUntil(() => seen.aborted.length, (n) => n > before)).toBe(before + 1);
    expect(seen.aborted.at(-1)).not.toBe("not aborted");
  });

  it("cancels the call when its signal aborts, and the handler learns it", async () => {
    const before = seen.aborted.length;
    const handled = seen.requestIds.length;
    const caller = new AbortController();
    const call = other().getEvidence({ operationId: "wait" }, { signal: caller.signal }).catch((e: unknown) => e);
    // Cancelled once the handler has the call.
    expect(await pollUntil(() => seen.requestIds.length, (n) => n > handled, 5000, 5)).toBe(handled + 1);
    caller.abort();
    const err = (await call) as ConnectError;
    expect(err.code).toBe(Code.Canceled);
    expect(await pollUntil(() => seen.aborted.length, (n) => n > before)).toBe(before + 1);
    expect(seen.aborted.at(-1)).not.toBe("not aborted");
  });
});

it("propagates the caller's current request id through the peer transport, and answers the call's id in x-request-id", async () => {
  const answer = await withRequestId("req-123", () => client().getEvidence({ operationId: "ok" }));
  expect(answer.status).toBe("complete");
  expect(seen.requestIds.at(-1)).toBe("req-123");
  let answered: string | null = null;
  const traced = createClient(ReceiptsService, createConnectTransport({ baseUrl: url, httpVersion: "1.1", interceptors: [(next) => async (req) => {
    const res = await next(req);
    answered = res.header.get("x-request-id");
    return res;
  }] }));
  await traced.getEvidence({ operationId: "ok" });
  expect(answered).toBe(seen.requestIds.at(-1));
  expect(answered).toMatch(/^[0-9a-f-]{36}$/);
});

it("refuses a request holding U+0000 in a text field with InvalidArgument naming it, before its handler runs", async () => {
  const calls = seen.requestIds.length;
  const err = await client().getEvidence({ operationId: "op\u0000" }).catch((e: unknown) => e);
  expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  expect(fromConnectError(err)).toMatchObject({ code: "validation_error", details: [{ field: "operationId", issue: "must not contain the U+0000 character" }] });
  expect(seen.requestIds.length).toBe(calls);
});

it("never runs the handler for bytes that are no message of the method's input type", async () => {
  const calls = seen.requestIds.length;
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = http.request(`${url}/${ReceiptsService.typeName}/GetEvidence`, { method: "POST", headers: { "content-type": "application/proto" } }, (response) => {
      let body = "";
      response.on("data", (c: Buffer) => (body += c.toString()));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
    request.end(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]));
  });
  expect(answer.status).toBeGreaterThanOrEqual(400);
  expect(JSON.parse(answer.body).message).toMatch(/^parse binary/);
  expect(seen.requestIds.length).toBe(calls);
});

it("answers an unexpected failure as internal without its message, and logs it", async () => {
  const before = await countedCalls("pgw.receipts.v1.ReceiptsService/GetEvidence", String(Code.Internal));
  const err = (await client().getEvidence({ operationId: "bug" }).catch((e: unknown) => e)) as ConnectError;
  expect(err.code).toBe(Code.Internal);
  expect(err.rawMessage).not.toContain("secret");
  expect(fromConnectError(err).code).toBe("internal");
  expect(await countedCalls("pgw.receipts.v1.ReceiptsService/GetEvidence", String(Code.Internal))).toBe(before + 1);
});

it("answers unimplemented for a method the service does not provide, and 404 for a path no service has", async () => {
  const err = (await client().uploadConfirmation({ shopId: "s" }).catch((e: unknown) => e)) as ConnectError;
  expect(err.code).toBe(Code.Unimplemented);
  const unknown = await fetch(`${url}/pgw.nope.v1.Nope/Call`, { method: "POST", headers: { "content-type": "application/proto" } });
  expect(unknown.status).toBe(404);
});

it("sends messages larger than gRPC's usual 4 MiB limit (an 11 MiB receipt file)", async () => {
  const size = 11 * 1024 * 1024;
  // What is tested is the size, not the speed: a loaded machine may take seconds to move 11 MiB.
  const file = await client().getReceiptFile({ itemId: "i", expires: BigInt(size) }, { timeoutMs: 20_000 });
  expect(file.content.byteLength).toBe(size);
  expect(file.content[size - 1]).toBe(7);
});

it("serves grpc.health.v1 to a gRPC client, unary and streaming", async () => {
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

describe("server reflection", () => {
  /** One reflection stream over gRPC: each request's answer, in order. */
  async function ask(service: typeof ServerReflection | typeof ServerReflectionV1alpha, requests: ServerReflectionRequest["messageRequest"][]) {
    const reflection = createClient(service as typeof ServerReflection, createGrpcTransport({ baseUrl: url }));
    const answers = [];
    for await (const answer of reflection.serverReflectionInfo((async function* () {
      for (const messageRequest of requests) yield { host: "", messageRequest };
    })())) answers.push(answer.messageResponse);
    return answers;
  }
  const fileNames = (answer: { case?: string; value?: unknown }) =>
    answer.case === "fileDescriptorResponse" ? (answer.value as { fileDescriptorProto: Uint8Array[] }).fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name) : answer;

  it.each([["v1", ServerReflection], ["v1alpha", ServerReflectionV1alpha]] as const)("%s lists the services and answers files by symbol and by name with their imports, as grpcurl's list and describe ask", async (_, service) => {
    const [services, bySymbol, byMethod, byName, missing] = await ask(service, [
      { case: "listServices", value: "" },
      { case: "fileContainingSymbol", value: "pgw.receipts.v1.GetEvidenceResponse" },
      { case: "fileContainingSymbol", value: "pgw.receipts.v1.ReceiptsService.GetEvidence" },
      { case: "fileByFilename", value: "grpc/health/v1/health.proto" },
      { case: "fileContainingSymbol", value: "pgw.nope.v1.Nope" },
    ]);
    expect((services.value as { service: { name: string }[] }).service.map((s) => s.name).sort()).toEqual([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "pgw.receipts.v1.ReceiptsService",
    ]);
    expect(fileNames(bySymbol)).toEqual(expect.arrayContaining(["pgw/receipts/v1/receipts.proto", "pgw/operations/v1/operations.proto"]));
    expect((fileNames(bySymbol) as string[])[0]).toBe("pgw/receipts/v1/receipts.proto");
    expect(fileNames(byMethod)).toEqual(fileNames(bySymbol));
    expect(fileNames(byName)).toEqual(["grpc/health/v1/health.proto"]);
    expect(missing).toMatchObject({ case: "errorResponse", value: { errorCode: Code.NotFound } });
  });
});

// Calls race each connection's ageing: over HTTP/1.1 the answer that says `Connection: close` ends
// it, over HTTP/2 a first GOAWAY stops new streams before the second closes the connection.
it.each([
  [
    "the kit's peer transport (Connect, HTTP/1.1)",
    (proxyUrl: string) => {
      const aged = createClient(ReceiptsService, createPeerTransport(proxyUrl, { timeoutMs: 2000 }));
      return { call: () => aged.getEvidence({ operationId: "x" }).then((a) => a.status, (e: unknown) => String(e)), close: () => undefined };
    },
  ],
  [
    "a @grpc/grpc-js client (gRPC, HTTP/2)",
    (proxyUrl: string) => {
      const aged = new grpc.Client(proxyUrl.replace("http://", ""), grpc.credentials.createInsecure());
      const call = () =>
        new Promise<string>((resolve) =>
          aged.makeUnaryRequest(
            `/${ReceiptsService.typeName}/GetEvidence`,
            (m: GetEvidenceRequest) => Buffer.from(toBinary(GetEvidenceRequestSchema, m)),
            (b: Buffer) => fromBinary(GetEvidenceResponseSchema, b),
            create(GetEvidenceRequestSchema, { operationId: "x" }),
            (err, answer?: GetEvidenceResponse) => resolve(err ? String(err) : (answer?.status ?? "")),
          ),
        );
      return { call, close: () => aged.close() };
    },
  ],
])("closes connections after their maximum age, so %s reconnects (and spreads over new replicas) without a call failing", async (_, clientOf) => {
  const aging = await startRpcServer(
    0,
    "127.0.0.1",
    (router) => router.service(ReceiptsService, { getEvidence: async () => ({ status: "complete" }) }),
    createLogger("aging", "silent"),
    new Registry(),
    { maxConnectionAgeMs: 200 },
  );
  const proxy = await countingProxy(aging.port);
  const caller = clientOf(proxy.url);
  try {
    const outcomes: string[] = [];
    const until = Date.now() + 2500;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < until) outcomes.push(await caller.call());
      }),
    );
    expect(outcomes.length).toBeGreaterThan(20);
    expect(outcomes.filter((o) => o !== "complete")).toEqual([]);
    expect(proxy.connections()).toBeGreaterThanOrEqual(3);
  } finally {
    caller.close();
    proxy.close();
    await aging.close(100);
  }
});

it("lets a call in flight finish when it closes, refuses new connections, and ends a call that outlives the grace", async () => {
  let started = 0;
  const slow = await startRpcServer(
    0,
    "127.0.0.1",
    (router) =>
      router.service(ReceiptsService, {
        getEvidence: async (req) => {
          started++;
          await new Promise((r) => setTimeout(r, Number(req.operationId))); // the scenario: a call that takes this long
          return { status: "complete" };
        },
      }),
    createLogger("slow", "silent"),
    new Registry(),
  );
  const slowClient = () => createClient(ReceiptsService, createPeerTransport(`http://127.0.0.1:${slow.port}`, { timeoutMs: 5000 }));
  const finishing = slowClient().getEvidence({ operationId: "300" });
  const outliving = slowClient()
    .getEvidence({ operationId: "3000" })
    .catch((e: unknown) => e);
  expect(await pollUntil(() => started, (n) => n === 2, 5000, 5)).toBe(2); // both calls are in flight
  const closing = Date.now();
  await slow.close(800);
  const closedAfter = Date.now() - closing;
  expect((await finishing).status).toBe("complete");
  expect(fromConnectError(await outliving).code).toBe("unavailable");
  expect(closedAfter).toBeGreaterThanOrEqual(700);
  expect(closedAfter).toBeLessThan(2000);
  const late = await slowClient()
    .getEvidence({ operationId: "0" })
    .catch((e: unknown) => e);
  expect(fromConnectError(late).code).toBe("unavailable");
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
  const request = `POST /${ReceiptsService.typeName}/GetEvidence HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
  try {
    // "P" could open either protocol's first line ("POST" or HTTP/2's "PRI *"): the server waits.
    socket.write(request.slice(0, 1));
    await new Promise((r) => setTimeout(r, 50)); // the scenario: the first byte arrives on its own
    socket.write(request.slice(1));
    expect(await answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\{"status":"complete"\}$/);
  } finally {
    socket.destroy();
  }
});
