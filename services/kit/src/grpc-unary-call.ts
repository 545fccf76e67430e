import { Code, ConnectError } from "@connectrpc/connect";
import http2 from "node:http2";
import type { GrpcTls } from "./grpc-tls";
import { CARRIED_METADATA, frame, FramedBody, MAX_MESSAGE_BYTES } from "./grpc-wire";

/**
 * A gRPC unary call made on Node's http2 directly: one request frame, one answer frame, the status
 * in the trailers. This is all the kit's clients need, and it costs less CPU and allocates less
 * than a @grpc/grpc-js call, whose channel, filter and interceptor layers run for every call
 * (README, "Benchmark").
 */

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;

// A stream the server refused unprocessed (REFUSED_STREAM, as a connection closes at its maximum
// age) is sent again on a new connection, up to this many times, within the call's deadline.
const REFUSED_RETRIES = 3;

// How long a connection has to answer the PING sent after a call's deadline passed unanswered.
const PING_TIMEOUT_MS = 1000;

/**
 * One HTTP/2 connection to a peer, opened on first use and again once the peer has closed it
 * (GOAWAY at its maximum age, a restart, a failure). Calls in flight finish on the old one.
 */
export class GrpcConnection {
  private live: http2.ClientHttp2Session | undefined;
  private pinging = false;
  private readonly authority: string;
  private readonly options: http2.SecureClientSessionOptions;

  /** `baseUrl` is `http://host:port` (how peers are configured); with `tls` the connection is mutual TLS whatever its scheme. */
  constructor(baseUrl: string, tls: GrpcTls | null) {
    const url = new URL(baseUrl);
    // The URL's own port, or its scheme's, whichever protocol the connection then speaks.
    const port = url.port || (url.protocol === "https:" ? 443 : 80);
    this.authority = `${tls ? "https" : "http"}://${url.hostname}:${port}`;
    // maxSessionMemory (MB) must hold a 32 MiB message in flight; the default is 10.
    this.options = { maxSessionMemory: 64, ...(tls ? { ca: tls.ca, cert: tls.cert, key: tls.key } : {}) };
  }

  /** The live session, or a new one. */
  session(): http2.ClientHttp2Session {
    const live = this.live;
    if (live && !live.closed && !live.destroyed) return live;
    const session = http2.connect(this.authority, this.options);
    const forget = () => {
      if (this.live === session) this.live = undefined;
    };
    // A failure reaches the calls through their streams; the session is only dropped.
    session.on("error", forget);
    session.on("goaway", forget);
    session.on("close", forget);
    // An idle connection does not keep the process alive (a call in flight has its deadline timer).
    session.unref();
    this.live = session;
    return session;
  }

  /**
   * After a call's deadline passed unanswered: a connection still being opened is dropped (its
   * peer does not answer the TCP handshake), and an open one must answer a PING within
   * PING_TIMEOUT_MS or is dropped. A peer that vanished without closing its connections (a node
   * lost, a network cut) would otherwise hold every later call until TCP gave up, minutes on.
   */
  checkAlive(session: http2.Http2Session): void {
    if (this.pinging || session !== this.live || session.destroyed) return;
    if (session.connecting) return session.destroy(new Error("the connection was not established within a call's deadline"));
    this.pinging = true;
    const timer = setTimeout(() => session.destroy(new Error(`the peer did not answer a PING within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS).unref();
    const answered = () => {
      clearTimeout(timer);
      this.pinging = false;
    };
    // False: too many PINGs outstanding already (the connection is busy, not dead).
    if (session.ping(answered) === false) answered();
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
export function callUnary(connection: GrpcConnection, request: UnaryRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const { signal } = request;
    if (signal?.aborted) return reject(new ConnectError("the call was cancelled", Code.Canceled));
    let stream: http2.ClientHttp2Stream | undefined;
    let settled = false;
    const settle = (outcome: Buffer | ConnectError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", cancel);
      if (outcome instanceof ConnectError) reject(outcome);
      else resolve(outcome);
    };
    const stop = (err: ConnectError) => {
      settle(err);
      stream?.close(NGHTTP2_CANCEL);
    };
    const cancel = () => stop(new ConnectError("the call was cancelled", Code.Canceled));
    const expire = () => {
      if (stream?.session) connection.checkAlive(stream.session);
      stop(new ConnectError("the deadline passed", Code.DeadlineExceeded));
    };
    const timer = setTimeout(expire, request.deadline - Date.now());
    signal?.addEventListener("abort", cancel, { once: true });
    const framed = frame(request.message);

    const send = (retriesLeft: number) => {
      const headers = {
        ...request.metadata,
        ":method": "POST",
        ":path": request.path,
        "content-type": "application/grpc",
        te: "trailers",
        "grpc-accept-encoding": "identity",
        // gRPC allows at most 8 digits.
        "grpc-timeout": `${Math.min(99_999_999, Math.max(1, request.deadline - Date.now()))}m`,
      };
      try {
        stream = connection.session().request(headers, { endStream: false });
      } catch (err) {
        return settle(new ConnectError(`the peer cannot be reached: ${String(err)}`, Code.Unavailable, undefined, undefined, err));
      }
      const answer = new Answer();
      const current = stream;
      const listeners = {
        response: (h: http2.IncomingHttpHeaders) => (answer.headers = h),
        trailers: (t: http2.IncomingHttpHeaders) => (answer.trailers = t),
        data: (chunk: Buffer) => {
          if (!answer.body.add(chunk)) stop(new ConnectError(`the answer is larger than ${MAX_MESSAGE_BYTES} bytes`, Code.ResourceExhausted));
        },
        error: (err: Error) => (answer.error = err),
        close: () => {
          // 'close' is a stream's last event. A closed stream can stay reachable until the next full
          // collection (Node's own bind kept every one so, see async-resource-bind.ts), and with it
          // all its listeners hold: detached, a call's objects die young instead of filling the old
          // generation (measured before that fix: the gateway promoted 45% less serving reads).
          for (const [event, listener] of attached) current.off(event, listener);
          if (settled) return;
          if (!answer.headers && current.rstCode === NGHTTP2_REFUSED_STREAM && retriesLeft > 0) return send(retriesLeft - 1);
          settle(answer.outcome(current.rstCode));
        },
      };
      const attached = Object.entries(listeners);
      for (const [event, listener] of attached) current.on(event, listener);
      current.end(framed);
    };
    send(REFUSED_RETRIES);
  });
}

/** What came back on one stream, and what it means. */
class Answer {
  headers: http2.IncomingHttpHeaders | undefined;
  trailers: http2.IncomingHttpHeaders | undefined;
  error: Error | undefined;
  readonly body = new FramedBody();

  outcome(rstCode: number): Buffer | ConnectError {
    if (!this.headers) {
      const why = this.error ? this.error.message : `the stream was reset (HTTP/2 error ${rstCode})`;
      return new ConnectError(`the peer cannot be reached: ${why}`, Code.Unavailable, undefined, undefined, this.error);
    }
    // A trailers-only answer (an error before any message) carries its status in the headers.
    const status = this.trailers ?? this.headers;
    const grpcStatus = status["grpc-status"];
    if (grpcStatus === undefined) {
      const httpStatus = Number(this.headers[":status"]);
      if (httpStatus !== 200) return new ConnectError(`the peer answered HTTP ${httpStatus}`, codeOfHttpStatus(httpStatus));
      return new ConnectError(`the answer ended without a gRPC status: ${this.error?.message ?? `HTTP/2 error ${rstCode}`}`, Code.Unavailable, undefined, undefined, this.error);
    }
    const code = Number(grpcStatus);
    if (code !== 0) return new ConnectError(decodeMessage(status["grpc-message"]), code as Code, carriedMetadata(status));
    return this.body.message() ?? new ConnectError("the answer is not one uncompressed message", Code.Internal);
  }
}

/** gRPC's percent-encoded status message. */
function decodeMessage(raw: string | string[] | undefined): string {
  const text = Array.isArray(raw) ? raw.join(",") : (raw ?? "");
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function carriedMetadata(status: http2.IncomingHttpHeaders): Headers {
  const metadata = new Headers();
  for (const [key, value] of Object.entries(status)) {
    if (CARRIED_METADATA.test(key) && typeof value === "string") metadata.set(key, value);
  }
  return metadata;
}

/** gRPC's mapping of an HTTP status that came without a gRPC one (a proxy answered, say). */
function codeOfHttpStatus(status: number): Code {
  if (status === 401) return Code.Unauthenticated;
  if (status === 403) return Code.PermissionDenied;
  if (status === 404) return Code.Unimplemented;
  if (status === 429 || status === 502 || status === 503 || status === 504) return Code.Unavailable;
  return status === 400 ? Code.Internal : Code.Unknown;
}
