/**
 * The transport units call each other on (createPeerTransport: connect-node's Connect transport over
 * a keep-alive HTTP/1.1 pool) against the kit's RPC server: an unreachable peer is unavailable, a
 * connection that stops carrying bytes is closed at the call's deadline, connections are pooled and
 * reused, a call may stay silent past the pool's idle timeout, and large requests pass.
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { ReceiptsService } from "@pgw/proto/gen/pgw/receipts/v1/receipts_pb";
import net from "node:net";
import { Registry } from "prom-client";
import { fromConnectError } from "@pgw/kit/rpc";
import { createLogger } from "@pgw/kit/runtime";
import { createPeerTransport } from "@pgw/kit/rpc";
import { startRpcServer, type RpcServer } from "@pgw/kit/rpc";

let server: RpcServer;
let received = 0;

beforeAll(async () => {
  server = await startRpcServer(
    0,
    "127.0.0.1",
    (router) =>
      router.service(ReceiptsService, {
        getEvidence: async (req) => {
          // The scenario: a call silent for longer than the pool's 4 s idle timeout.
          if (req.operationId === "silent") await new Promise((r) => setTimeout(r, 4500));
          return { status: "complete" };
        },
        uploadConfirmation: async (req) => {
          received = req.content.byteLength;
          return {};
        },
      }),
    createLogger("peer-transport-test", "silent"),
    new Registry(),
  );
});
afterAll(() => server.close(100));

const receipts = (url: string, timeoutMs = 5000) => createClient(ReceiptsService, createPeerTransport(url, { timeoutMs }));

/** A TCP proxy on a free port to the server: each accepted connection's two sockets, in order. */
async function tcpProxy(): Promise<{ url: string; links: [net.Socket, net.Socket][]; close(): void }> {
  const links: [net.Socket, net.Socket][] = [];
  const proxy = net.createServer((inbound) => {
    const outbound = net.connect(server.port, "127.0.0.1");
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

it("reports a peer that is not listening as unavailable", async () => {
  const down = await startRpcServer(0, "127.0.0.1", () => undefined, createLogger("down", "silent"), new Registry());
  await down.close(0);
  const err = await receipts(`http://127.0.0.1:${down.port}`, 2000)
    .getEvidence({ operationId: "x" })
    .catch((e: unknown) => e);
  expect(fromConnectError(err).code).toBe("unavailable");
});

it("closes a connection that stops carrying bytes (a peer gone without closing it) when a call's deadline passes, so the next call gets a new one", async () => {
  // A TCP proxy whose existing connections can be frozen: nothing passes, nothing is closed.
  const proxy = await tcpProxy();
  const proxied = receipts(proxy.url);
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
  const proxy = await tcpProxy();
  const pooled = receipts(proxy.url);
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
  const answer = await receipts(`http://127.0.0.1:${server.port}`, 10_000).getEvidence({ operationId: "silent" });
  expect(answer.status).toBe("complete");
});

it("ends a call at its deadline when the peer takes the connection but never answers", async () => {
  const silent = net.createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  try {
    const started = Date.now();
    const err = (await receipts(`http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, 300)
      .getEvidence({ operationId: "ok" })
      .catch((e: unknown) => e)) as ConnectError;
    expect(err.code).toBe(Code.DeadlineExceeded);
    expect(Date.now() - started).toBeLessThan(1500);
  } finally {
    silent.close();
  }
});

it("sends a request larger than gRPC's usual 4 MiB limit (an 11 MiB confirmation upload)", async () => {
  const size = 11 * 1024 * 1024;
  await receipts(`http://127.0.0.1:${server.port}`, 10_000).uploadConfirmation({ shopId: "s", content: new Uint8Array(size).fill(1) });
  expect(received).toBe(size);
});
