/**
 * Mutual TLS between units (GRPC_TLS_*): a server with TLS answers only clients holding a certificate
 * of the internal CA (HTTP/1.1 or HTTP/2, chosen by ALPN on the one port), and a client with TLS
 * trusts only servers of that CA. Certificates are made with the openssl CLI for each run
 * (test/support/pki.ts).
 */
import { ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@pgw/proto/gen/grpc/health/v1/health_pb";
import { Registry } from "prom-client";
import { ConfigError } from "@pgw/kit/runtime";
import { fromConnectError } from "@pgw/kit/rpc";
import { registerGrpcHealth } from "@pgw/kit/rpc";
import { loadGrpcTls, type GrpcTls } from "@pgw/kit/rpc";
import { createLogger } from "@pgw/kit/runtime";
import { createPeerTransport } from "@pgw/kit/rpc";
import { startRpcServer, type RpcServer } from "@pgw/kit/rpc";
import { throwawayPki } from "../../../test/support/pki";

const pki = throwawayPki();

/** An RPC server answering grpc.health.v1 on a free port, with `tls`. */
const healthServer = (tls: GrpcTls) =>
  startRpcServer(0, "127.0.0.1", (router) => registerGrpcHealth(router, { accepting: true, checks: { ready: async () => true } }, []), createLogger("grpc-tls-test", "silent"), new Registry(), { tls });

let tls: GrpcTls;
let server: RpcServer;
let url: string;

beforeAll(async () => {
  pki.make("pgw");
  pki.make("rogue");
  tls = loadGrpcTls(pki.env("ledger"))!;
  server = await healthServer(tls);
  url = `http://127.0.0.1:${server.port}`;
}, 60_000);
afterAll(async () => {
  await server?.close(100);
  pki.remove();
});

const health = (url: string, timeoutMs: number, tls: GrpcTls | null = null) => createClient(Health, createPeerTransport(url, { timeoutMs, tls }));
const check = (client: Client<typeof Health>) =>
  client.check({}).then(
    (res) => res.status,
    (err: unknown) => fromConnectError(err).code,
  );

test("a unit with a certificate of the internal CA is answered over TLS", async () => {
  expect(await check(health(url, 5000, tls))).toBe(Status.SERVING);
});

test("calls over TLS are not held back by delayed ACKs: sequential calls take milliseconds, not the ~40 ms a withheld body costs", async () => {
  const client = health(url, 2000, tls);
  await client.check({ service: "" });
  const took: number[] = [];
  for (let i = 0; i < 40; i++) {
    const started = performance.now();
    await client.check({ service: "" });
    took.push(performance.now() - started);
  }
  took.sort((a, b) => a - b);
  // Nagle's algorithm holding each body until the server's delayed ACK puts every call near 40 ms.
  expect(took[Math.floor(took.length / 2)]).toBeLessThan(20);
});

test("a gRPC client (HTTP/2, chosen by ALPN on the same port) with a certificate of the internal CA is answered too", async () => {
  const grpc = createClient(Health, createGrpcTransport({ baseUrl: `https://localhost:${server.port}`, nodeOptions: { ca: tls.ca, cert: tls.cert, key: tls.key } }));
  expect(await check(grpc)).toBe(Status.SERVING);
  const anonymous = createClient(Health, createGrpcTransport({ baseUrl: `https://localhost:${server.port}`, nodeOptions: { ca: tls.ca } }));
  await expect(anonymous.check({})).rejects.toBeInstanceOf(ConnectError);
});

test("a plaintext client, one without a certificate and one with another CA's certificate are refused", async () => {
  expect(await check(health(url, 2000))).toBe("unavailable");
  const rogue = loadGrpcTls(pki.env("ledger", "rogue", "pgw"))!; // trusts our CA, but its own certificate is the rogue CA's
  expect(await check(health(url, 2000, rogue))).toBe("unavailable");
});

test("a client with TLS refuses a server whose certificate another CA signed", async () => {
  const impostor = await healthServer(loadGrpcTls(pki.env("ledger", "rogue"))!);
  try {
    expect(await check(health(`http://127.0.0.1:${impostor.port}`, 2000, tls))).toBe("unavailable");
  } finally {
    await impostor.close(100);
  }
});

test("loadGrpcTls takes all three files, or none in local mode or a run that only migrates or re-seals, and names what is missing or unreadable", () => {
  expect(loadGrpcTls({ LOCAL_MODE: "true" })).toBeNull();
  expect(loadGrpcTls({ MIGRATIONS: "only" })).toBeNull();
  expect(loadGrpcTls({ DATA_RESEAL: "only" })).toBeNull();
  expect(() => loadGrpcTls({})).toThrow(new ConfigError("GRPC_TLS_CA_FILE", "and GRPC_TLS_CERT_FILE, GRPC_TLS_KEY_FILE are required outside local mode (units authenticate each other by mutual TLS)"));
  expect(() => loadGrpcTls({ GRPC_TLS_CA_FILE: pki.file("pgw", "ca.pem"), GRPC_TLS_CERT_FILE: pki.file("pgw", "ledger.pem") })).toThrow(
    new ConfigError("GRPC_TLS_KEY_FILE", "is required with GRPC_TLS_CA_FILE and GRPC_TLS_CERT_FILE (gRPC TLS needs the CA, the certificate and its key)"),
  );
  expect(() => loadGrpcTls({ ...pki.env("ledger"), GRPC_TLS_KEY_FILE: pki.file("pgw", "missing.key") })).toThrow(new ConfigError("GRPC_TLS_KEY_FILE", "cannot be read (ENOENT)"));
});
