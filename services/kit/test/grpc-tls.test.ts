/**
 * Mutual TLS between units (GRPC_TLS_*): a server with TLS answers only clients holding a certificate
 * of the internal CA, and a client with TLS trusts only servers of that CA. Certificates are made
 * with the openssl CLI for each run (test/support/pki.ts).
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@pgw/proto/gen/grpc/health/v1/health_pb";
import { Registry } from "prom-client";
import { createServiceClient } from "../src/clients";
import { ConfigError } from "../src/config";
import { registerGrpcHealth } from "../src/grpc-health";
import { startGrpcServer, type GrpcServer } from "../src/grpc-server";
import { loadGrpcTls, type GrpcTls } from "../src/grpc-tls";
import { createLogger } from "../src/logger";
import { throwawayPki } from "../../../test/support/pki";

const pki = throwawayPki();
const envOf = pki.env;
const file = pki.file;

/** A gRPC server answering grpc.health.v1 on a free port, with `tls`. */
const healthServer = (tls: GrpcTls) =>
  startGrpcServer(0, "127.0.0.1", (router) => registerGrpcHealth(router, { accepting: true, checks: { ready: async () => true } }, []), createLogger("grpc-tls-test", "silent"), new Registry(), { tls });

let tls: GrpcTls;
let server: GrpcServer;
let url: string;

beforeAll(async () => {
  pki.make("pgw");
  pki.make("rogue");
  tls = loadGrpcTls(envOf("pgw"))!;
  server = await healthServer(tls);
  url = `http://127.0.0.1:${server.port}`;
}, 60_000);
afterAll(async () => {
  await server?.close(100);
  pki.remove();
});

const check = (client: ReturnType<typeof createServiceClient<typeof Health>>) =>
  client.check({}).then(
    (res) => res.status,
    (err: { code: Code }) => err.code,
  );

test("a unit with a certificate of the internal CA is answered over TLS", async () => {
  expect(await check(createServiceClient(Health, url, 5000, tls))).toBe(Status.SERVING);
});

test("a gRPC client (HTTP/2, chosen by ALPN on the same port) with a certificate of the internal CA is answered too", async () => {
  const grpc = createClient(Health, createGrpcTransport({ baseUrl: `https://localhost:${server.port}`, nodeOptions: { ca: tls.ca, cert: tls.cert, key: tls.key } }));
  expect(await check(grpc as ReturnType<typeof createServiceClient<typeof Health>>)).toBe(Status.SERVING);
  const anonymous = createClient(Health, createGrpcTransport({ baseUrl: `https://localhost:${server.port}`, nodeOptions: { ca: tls.ca } }));
  await expect(anonymous.check({})).rejects.toBeInstanceOf(ConnectError);
});

test("a plaintext client, one without a certificate and one with another CA's certificate are refused", async () => {
  expect(await check(createServiceClient(Health, url, 2000))).toBe(Code.Unavailable);
  const rogue = loadGrpcTls(envOf("rogue", "pgw"))!; // trusts our CA, but its own certificate is the rogue CA's
  expect(await check(createServiceClient(Health, url, 2000, rogue))).toBe(Code.Unavailable);
});

test("a client with TLS refuses a server whose certificate another CA signed", async () => {
  const impostor = await healthServer(loadGrpcTls(envOf("rogue"))!);
  try {
    expect(await check(createServiceClient(Health, `http://127.0.0.1:${impostor.port}`, 2000, tls))).toBe(Code.Unavailable);
  } finally {
    await impostor.close(100);
  }
});

test("loadGrpcTls takes all three files or none, and names what is missing or unreadable", () => {
  expect(loadGrpcTls({})).toBeNull();
  expect(() => loadGrpcTls({ GRPC_TLS_CA_FILE: file("pgw-ca.pem"), GRPC_TLS_CERT_FILE: file("pgw.pem") })).toThrow(
    new ConfigError("GRPC_TLS_KEY_FILE", "is required with GRPC_TLS_CA_FILE and GRPC_TLS_CERT_FILE (gRPC TLS needs the CA, the certificate and its key)"),
  );
  expect(() => loadGrpcTls({ ...envOf("pgw"), GRPC_TLS_KEY_FILE: file("missing.key") })).toThrow(new ConfigError("GRPC_TLS_KEY_FILE", "cannot be read (ENOENT)"));
});
