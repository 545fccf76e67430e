import { Code, ConnectError } from "@connectrpc/connect";
import { codeFromHttpStatus, errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import http from "node:http";
import https from "node:https";
import { CONTENT_TYPE_PROTO, PROTOCOL_VERSION_HEADER, TIMEOUT_HEADER } from "./connect-wire";
import type { GrpcTls } from "./grpc-tls";
import { CARRIED_METADATA, MAX_MESSAGE_BYTES } from "./grpc-wire";

/**
 * A unary call in Connect's protocol over HTTP/1.1 (connect-wire.ts) on Node's http directly: the
 * request's message as the body, the answer's message or a JSON error back. HTTP/1.1 because Node's
 * http2 streams outlive young-generation collections: between units they made the V8 full
 * collections that were the read path's tail (README, "Benchmark").
 */

// A pooled connection idle this long is closed by the client, well before the server's own
// keep-alive timeout (grpc-server.ts), so a request never races the server closing its connection.
const IDLE_MS = 4000;
// Calls in flight to one peer beyond this wait for a connection (within their deadlines).
const MAX_CONNECTIONS = 256;

/** The pooled keep-alive connections to one peer. A call whose deadline passes or that is cancelled closes its own. */
export class ConnectConnection {
  readonly agent: http.Agent;
  readonly host: string;
  readonly port: number;
  readonly request: typeof http.request;

  /** `baseUrl` is `http://host:port` (how peers are configured); with `tls` the connection is mutual TLS whatever its scheme. */
  constructor(baseUrl: string, tls: GrpcTls | null) {
    const url = new URL(baseUrl);
    this.host = url.hostname;
    // The URL's own port, or its scheme's, whichever protocol the connection then speaks.
    this.port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const pool = { keepAlive: true, timeout: IDLE_MS, maxSockets: MAX_CONNECTIONS, noDelay: true };
    this.agent = tls ? new https.Agent({ ...pool, ca: tls.ca, cert: tls.cert, key: tls.key, ALPNProtocols: ["http/1.1"] }) : new http.Agent(pool);
    this.request = tls ? https.request : http.request;
  }
}

export interface UnaryRequest {
  /** `/package.Service/Method` */
  path: string;
  message: Buffer;
  /** Metadata sent as request headers. */
  metadata: Record<string, string>;
  /** Epoch milliseconds. */
  deadline: number;
  signal?: AbortSignal;
}

/** Makes the call; resolves to the answer's message bytes or rejects with the ConnectError callers handle. */
export function callUnary(connection: ConnectConnection, call: UnaryRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const { signal } = call;
    if (signal?.aborted) return reject(new ConnectError("the call was cancelled", Code.Canceled));
    let settled = false;
    const settle = (outcome: Buffer | ConnectError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", cancel);
      if (outcome instanceof ConnectError) reject(outcome);
      else resolve(outcome);
    };
    // HTTP/1.1 has no way to cancel one request but to close its connection; the server's side
    // sees the close and aborts the handler's signal.
    const stop = (err: ConnectError) => {
      settle(err);
      request.destroy();
    };
    const cancel = () => stop(new ConnectError("the call was cancelled", Code.Canceled));
    const timer = setTimeout(() => stop(new ConnectError("the deadline passed", Code.DeadlineExceeded)), call.deadline - Date.now());
    signal?.addEventListener("abort", cancel, { once: true });
    const request = connection.request({
      agent: connection.agent,
      host: connection.host,
      port: connection.port,
      method: "POST",
      path: call.path,
      headers: {
        ...call.metadata,
        "content-type": CONTENT_TYPE_PROTO,
        "content-length": call.message.length,
        [PROTOCOL_VERSION_HEADER]: "1",
        [TIMEOUT_HEADER]: Math.max(1, call.deadline - Date.now()),
      },
    });
    request.on("error", (err) => settle(new ConnectError(`the peer cannot be reached: ${err.message}`, Code.Unavailable, undefined, undefined, err)));
    request.on("response", (response) => {
      if (Number(response.headers["content-length"]) > MAX_MESSAGE_BYTES) return stop(tooLarge());
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_MESSAGE_BYTES) stop(tooLarge());
        else chunks.push(chunk);
      });
      response.on("end", () => settle(outcomeOf(response, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))));
      // Closed before its end: the connection was lost mid-answer. Every answer closes, so the
      // error (whose stack trace costs more than the rest of a call's bookkeeping) is built only then.
      response.on("close", () => settled || settle(new ConnectError("the peer closed the connection before the answer ended", Code.Unavailable)));
    });
    request.end(call.message);
  });
}

const tooLarge = () => new ConnectError(`the answer is larger than ${MAX_MESSAGE_BYTES} bytes`, Code.ResourceExhausted);

/** What a complete answer means: the message, the error its JSON body describes, or what its HTTP status says. */
function outcomeOf(response: http.IncomingMessage, body: Buffer): Buffer | ConnectError {
  const status = response.statusCode ?? 0;
  const contentType = response.headers["content-type"] ?? "";
  if (status === 200) return contentType === CONTENT_TYPE_PROTO ? body : new ConnectError(`the peer answered content-type ${contentType || "none"}`, Code.Internal);
  const fallback = new ConnectError(`the peer answered HTTP ${status}`, codeFromHttpStatus(status));
  if (!contentType.startsWith("application/json")) return fallback;
  try {
    return errorFromJsonBytes(body, carriedMetadata(response), fallback);
  } catch {
    return fallback;
  }
}

function carriedMetadata(response: http.IncomingMessage): Headers {
  const metadata = new Headers();
  for (const [key, value] of Object.entries(response.headers)) {
    if (CARRIED_METADATA.test(key) && typeof value === "string") metadata.set(key, value);
  }
  return metadata;
}
