import type { Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { Duplex } from "node:stream";
import type { Registry } from "prom-client";
import type { GrpcTls } from "./grpc-tls";
import { sendingRequestId } from "./rpc-interceptors";
import { rpcClientMetrics } from "./rpc-metrics";
import { MAX_MESSAGE_BYTES } from "./rpc-server";
import { tracingClientInterceptors } from "./rpc-tracing";

export interface PeerTransportOptions {
  /** The deadline of every call that sets no `timeoutMs` of its own. Default 5 s. */
  timeoutMs?: number;
  /** Mutual TLS (the unit's loadGrpcTls): the connection is TLS whatever the URL's scheme. */
  tls?: GrpcTls | null;
  /** The calling unit's registry: every call is timed there (rpc-metrics.ts, `grpc_client_handling_seconds`). */
  registry?: Registry;
}

// A pooled connection idle this long is closed by the client, well before the server's keep-alive
// timeout (rpc-server.ts), so a request never races the server closing its connection.
const IDLE_MS = 4000;
// Calls in flight to one peer beyond this wait for a connection (within their deadlines).
const MAX_CONNECTIONS = 256;

/**
 * An https.Agent whose TLS sockets send at once. Node applies the agent's `noDelay` to plain sockets
 * only, and connect-node writes a request's headers and body separately, so under mutual TLS each
 * call's body waited for the server's delayed ACK: about 40 ms a call.
 */
class NoDelayTlsAgent extends https.Agent {
  override createConnection(options: https.RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const socket = super.createConnection(options, callback);
    if (socket instanceof net.Socket) socket.setNoDelay(true);
    return socket;
  }
}

/**
 * The transport a unit calls another unit's services on, for `createClient(Service, transport)`
 * (`@connectrpc/connect`): connect-node's Connect transport, binary protobuf, over HTTP/1.1
 * keep-alive connections ([docs/decisions/0001](../../../docs/decisions/0001-internal-transport.md):
 * a server's connection ageing and a call's cancel or deadline then end only that connection and
 * fail no other call). Every call has a deadline and carries the current request id
 * (x-request-id), with tracing on its span's `traceparent` (rpc-tracing.ts), and, given the unit's
 * registry, is timed there; answers are not compressed (between units CPU costs more than bytes).
 * `baseUrl` is `http://host:port`, as peers are configured. One transport serves every service of the peer.
 */
export function createPeerTransport(baseUrl: string, options: PeerTransportOptions = {}): Transport {
  const tls = options.tls ?? null;
  const pool = { keepAlive: true, timeout: IDLE_MS, maxSockets: MAX_CONNECTIONS, noDelay: true };
  return createConnectTransport({
    baseUrl: tls ? baseUrl.replace(/^http:/, "https:") : baseUrl,
    httpVersion: "1.1",
    nodeOptions: { agent: tls ? new NoDelayTlsAgent({ ...pool, ca: tls.ca, cert: tls.cert, key: tls.key }) : new http.Agent(pool) },
    useBinaryFormat: true,
    defaultTimeoutMs: options.timeoutMs ?? 5000,
    interceptors: [sendingRequestId, ...tracingClientInterceptors(), ...(options.registry ? [rpcClientMetrics(options.registry)] : [])],
    acceptCompression: [],
    readMaxBytes: MAX_MESSAGE_BYTES,
    writeMaxBytes: MAX_MESSAGE_BYTES,
  });
}
