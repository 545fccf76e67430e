/**
 * Internal teams call a unit's RPC port with whatever gRPC or Connect tooling they have. Against the
 * real ledger unit (on Postgres and NATS): @grpc/grpc-js, connect-node's gRPC, gRPC-Web and Connect
 * transports, a gzip-compressed request, grpc.health.v1's Watch stream, and the buf CLI, which learns
 * the API by server reflection (no .proto files; v1, and v1alpha alone as older grpcurl asks). A handler's public error arrives with its ErrorInfo detail everywhere: grpc-js
 * reads it from grpc-status-details-bin, a Connect client from the error's details.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { compressionGzip, createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { fromConnectError } from "@pgw/kit/rpc";
import { HealthCheckRequestSchema, HealthCheckResponseSchema, HealthCheckResponse_ServingStatus as Status } from "@pgw/proto/gen/grpc/health/v1/health_pb";
import { ErrorInfoSchema, type ErrorInfo } from "@pgw/proto/gen/pgw/errors/v1/errors_pb";
import { GetBalancesRequestSchema, GetBalancesResponseSchema, LedgerService, type GetBalancesResponse } from "@pgw/proto/gen/pgw/ledger/v1/ledger_pb";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { startTestLedger, type TestLedger } from "./support";

const BUF = path.join(__dirname, "..", "..", "..", "node_modules", ".bin", "buf");
const INVALID = { code: "validation_error", message: "shop_id must be a UUID", details: [{ field: "shop_id", issue: "must be a UUID" }] };

let ledger: TestLedger;
let url: string;
beforeAll(async () => {
  ledger = await startTestLedger();
  url = `http://127.0.0.1:${ledger.unit.grpcPort}`;
});
afterAll(() => ledger.stop());

/** Runs the buf CLI; resolves to its standard output. */
const buf = (...args: string[]) =>
  new Promise<string>((resolve, reject) => execFile(BUF, args, { timeout: 30_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))));

describe.each([
  ["connect-node's gRPC transport", () => createGrpcTransport({ baseUrl: url })],
  ["connect-node's gRPC-Web transport", () => createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" })],
  ["connect-node's Connect transport (HTTP/1.1, JSON)", () => createConnectTransport({ baseUrl: url, httpVersion: "1.1" })],
  ["connect-node's Connect transport (HTTP/2, binary)", () => createConnectTransport({ baseUrl: url, httpVersion: "2", useBinaryFormat: true })],
  ["connect-node's gRPC transport sending gzip", () => createGrpcTransport({ baseUrl: url, sendCompression: compressionGzip, compressMinBytes: 0 })],
  ["connect-node's Connect transport sending gzip", () => createConnectTransport({ baseUrl: url, httpVersion: "1.1", sendCompression: compressionGzip, compressMinBytes: 0 })],
])("%s", (_, transport: () => Transport) => {
  it("gets the answer, and a handler's public error with its ErrorInfo detail", async () => {
    const ledgerClient = createClient(LedgerService, transport());
    expect((await ledgerClient.getBalances({ shopId: randomUUID() })).$typeName).toBe("pgw.ledger.v1.GetBalancesResponse");
    const err = (await ledgerClient.getBalances({ shopId: "nope" }).catch((e: unknown) => e)) as ConnectError;
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(ErrorInfoSchema)).toMatchObject([{ code: "validation_error", details: [{ field: "shop_id", issue: "must be a UUID" }] }]);
    expect(fromConnectError(err)).toMatchObject(INVALID);
  });
});

/** The ErrorInfo details of a google.rpc.Status (grpc-status-details-bin), read field by field. */
function errorInfosOf(statusBytes: Buffer): ErrorInfo[] {
  const infos: ErrorInfo[] = [];
  const status = new BinaryReader(statusBytes);
  while (status.pos < status.len) {
    const [field, wireType] = status.tag();
    if (field !== 3) {
      status.skip(wireType);
      continue;
    }
    // google.protobuf.Any: type_url = 1, value = 2
    const any = new BinaryReader(status.bytes());
    let typeUrl = "";
    let value: Uint8Array = new Uint8Array();
    while (any.pos < any.len) {
      const [anyField, anyWireType] = any.tag();
      if (anyField === 1) typeUrl = any.string();
      else if (anyField === 2) value = any.bytes();
      else any.skip(anyWireType);
    }
    if (typeUrl === `type.googleapis.com/${ErrorInfoSchema.typeName}`) infos.push(fromBinary(ErrorInfoSchema, value));
  }
  return infos;
}

it("answers @grpc/grpc-js, whose error carries the ErrorInfo in grpc-status-details-bin", async () => {
  const client = new grpc.Client(url.replace("http://", ""), grpc.credentials.createInsecure());
  const getBalances = (shopId: string) =>
    new Promise<{ err: grpc.ServiceError | null; answer?: GetBalancesResponse }>((resolve) =>
      client.makeUnaryRequest(
        `/${LedgerService.typeName}/GetBalances`,
        (m: object) => Buffer.from(toBinary(GetBalancesRequestSchema, create(GetBalancesRequestSchema, m))),
        (b: Buffer) => fromBinary(GetBalancesResponseSchema, b),
        { shopId },
        (err, answer) => resolve({ err, answer }),
      ),
    );
  try {
    expect((await getBalances(randomUUID())).err).toBeNull();
    const { err } = await getBalances("nope");
    expect({ code: err?.code, details: err?.details }).toEqual({ code: grpc.status.INVALID_ARGUMENT, details: INVALID.message });
    const [statusBytes] = err!.metadata.get("grpc-status-details-bin") as Buffer[];
    expect(errorInfosOf(statusBytes)).toMatchObject([{ code: "validation_error", details: [{ field: "shop_id", issue: "must be a UUID" }] }]);
    expect(err!.metadata.get("pgw-error-code")).toEqual([]);
  } finally {
    client.close();
  }
});

it("streams grpc.health.v1.Health/Watch to @grpc/grpc-js, which can cancel it", async () => {
  const client = new grpc.Client(url.replace("http://", ""), grpc.credentials.createInsecure());
  try {
    const watch = client.makeServerStreamRequest(
      "/grpc.health.v1.Health/Watch",
      (m: object) => Buffer.from(toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, m))),
      (b: Buffer) => fromBinary(HealthCheckResponseSchema, b),
      { service: LedgerService.typeName },
    );
    const outcome = await new Promise<{ first: Status; ended: grpc.status }>((resolve) => {
      let first: Status | undefined;
      watch.on("data", (answer: { status: Status }) => {
        first ??= answer.status;
        watch.cancel();
      });
      watch.on("error", (err: grpc.ServiceError) => resolve({ first: first!, ended: err.code }));
    });
    expect(outcome).toEqual({ first: Status.SERVING, ended: grpc.status.CANCELLED });
  } finally {
    client.close();
  }
});

it("accepts a gzip-compressed Connect request, as curl would send it", async () => {
  const res = await fetch(`${url}/${LedgerService.typeName}/GetBalances`, {
    method: "POST",
    headers: { "content-type": "application/json", "content-encoding": "gzip" },
    body: gzipSync(JSON.stringify({ shopId: "nope" })),
  });
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ code: "invalid_argument", message: INVALID.message, details: [{ type: ErrorInfoSchema.typeName, debug: { code: "validation_error" } }] });
});

describe("the buf CLI, with server reflection and no .proto files", () => {
  it("lists the methods of the port", async () => {
    const listed = (await buf("curl", "--protocol", "grpc", "--http2-prior-knowledge", "--list-methods", url)).trim().split("\n");
    expect(listed).toEqual(expect.arrayContaining([`${LedgerService.typeName}/GetBalances`, "grpc.health.v1.Health/Check", "grpc.reflection.v1.ServerReflection/ServerReflectionInfo"]));
    expect((await buf("curl", "--list-methods", url)).trim().split("\n")).toEqual(listed);
  });

  it("calls a method over gRPC (h2c) and over Connect (HTTP/1.1), and the health check", async () => {
    const shopId = randomUUID();
    const body = JSON.stringify({ shopId });
    const overGrpc = JSON.parse(await buf("curl", "--protocol", "grpc", "--http2-prior-knowledge", "-d", body, `${url}/${LedgerService.typeName}/GetBalances`));
    const overConnect = JSON.parse(await buf("curl", "-d", body, `${url}/${LedgerService.typeName}/GetBalances`));
    expect(overConnect).toEqual(overGrpc);
    const health = JSON.parse(await buf("curl", "--protocol", "grpc", "--http2-prior-knowledge", `${url}/grpc.health.v1.Health/Check`));
    expect(health).toEqual({ status: "SERVING" });
  });

  it("lists and calls through the older grpc.reflection.v1alpha alone, the one grpcurl's older releases speak", async () => {
    const v1alpha = ["--reflect-protocol", "grpc-v1alpha", "--protocol", "grpc", "--http2-prior-knowledge"];
    const listed = (await buf("curl", ...v1alpha, "--list-methods", url)).trim().split("\n");
    expect(listed).toEqual(expect.arrayContaining([`${LedgerService.typeName}/GetBalances`, "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"]));
    const shopId = randomUUID();
    const answer = JSON.parse(await buf("curl", ...v1alpha, "-d", JSON.stringify({ shopId }), `${url}/${LedgerService.typeName}/GetBalances`));
    expect(answer).toEqual(JSON.parse(await buf("curl", "-d", JSON.stringify({ shopId }), `${url}/${LedgerService.typeName}/GetBalances`)));
  });
});
