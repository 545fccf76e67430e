import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import http from "node:http";
import type http2 from "node:http2";
import type { Readable } from "node:stream";
import { CONTENT_TYPE_JSON, CONTENT_TYPE_PROTO, PROTOCOL_VERSION_HEADER, TIMEOUT_HEADER } from "./connect-wire";
import { MAX_MESSAGE_BYTES, putCarriedMetadata } from "./grpc-wire";
import type { Exchange, Refusal, Route } from "./rpc-call";

/**
 * The server's side of one call in Connect's unary protocol, on an HTTP/1.1 request (what the kit's
 * clients send) or an HTTP/2 stream (Connect's transport with httpVersion "2"): what the request
 * asks for, its message, and the answer (connect-wire.ts). Unary methods only: a server-streaming
 * method is served over gRPC.
 */

const CONTENT_TYPE = /^application\/(proto|json)(;\s*charset=utf-8)?$/i;
const TIMEOUT_MS = /^\d{1,10}$/;

/** Why the request cannot start a call, as the HTTP status or Connect error to answer; null when it can. */
export function connectRefusalOf(method: string | undefined, headers: http.IncomingHttpHeaders, route: Route | undefined): Refusal | null {
  if (!route) return { httpStatus: 404 };
  if (method !== "POST") return { httpStatus: 405 };
  if (route.method.methodKind !== "unary" || !CONTENT_TYPE.test(headers["content-type"] ?? "")) return { httpStatus: 415 };
  const encoding = headers["content-encoding"];
  if (encoding !== undefined && encoding !== "identity") return new ConnectError(`content-encoding ${encoding} is not supported (send identity)`, Code.Unimplemented);
  const version = headers[PROTOCOL_VERSION_HEADER];
  if (version !== undefined && version !== "1") return new ConnectError(`${PROTOCOL_VERSION_HEADER} ${String(version)} is not supported (send 1)`, Code.InvalidArgument);
  const timeout = headers[TIMEOUT_HEADER];
  if (timeout !== undefined && !TIMEOUT_MS.test(timeout as string)) return new ConnectError(`${TIMEOUT_HEADER} must be at most 10 digits`, Code.InvalidArgument);
  return null;
}

/** The caller's deadline (epoch ms) from connect-timeout-ms (checked by connectRefusalOf), or undefined when it set none. */
export function connectDeadlineOf(headers: http.IncomingHttpHeaders, now = Date.now()): number | undefined {
  const timeout = headers[TIMEOUT_HEADER];
  return timeout === undefined ? undefined : now + Number(timeout);
}

/**
 * One Connect unary call: its request's body, then one answer, a message or an error. On HTTP/1.1
 * the body is the request and the answer goes on the response; on HTTP/2 both are the stream.
 */
export class ConnectExchange implements Exchange {
  readonly format: "proto" | "json";
  private readonly declaredLength: number;
  private started = false;

  /** `closeAfter` (HTTP/1.1 only): the answer asks the caller to close the connection (it is aged or the server is closing). */
  constructor(
    headers: http.IncomingHttpHeaders,
    private readonly body: Readable,
    private readonly out: http.ServerResponse | http2.ServerHttp2Stream,
    private closeAfter: boolean,
  ) {
    this.format = /^application\/json/i.test(headers["content-type"] ?? "") ? "json" : "proto";
    this.declaredLength = Number(headers["content-length"]);
  }

  /** False once the caller has gone (the connection or stream closed) or the answer has been sent. */
  get open(): boolean {
    return !this.out.destroyed && !this.out.writableEnded;
  }

  get closing(): http.ServerResponse | http2.ServerHttp2Stream {
    return this.out;
  }

  read(): Promise<Buffer> {
    return readBody(this.body, this.declaredLength).catch((err: unknown) => {
      // A body left unread: the connection cannot carry another request.
      this.closeAfter = true;
      throw err;
    });
  }

  send(message: Buffer): void {
    if (message.length > MAX_MESSAGE_BYTES) throw new ConnectError(`the answer is larger than ${MAX_MESSAGE_BYTES} bytes`, Code.ResourceExhausted);
    if (this.open) this.respond(200, this.format === "json" ? CONTENT_TYPE_JSON : CONTENT_TYPE_PROTO, message);
  }

  /** Answers the error; without one there is nothing left to do (a unary answer went out with send). */
  end(err?: ConnectError): void {
    if (!err || this.started || !this.open) return;
    this.respond(codeToHttpStatus(err.code), CONTENT_TYPE_JSON, Buffer.from(errorToJsonBytes(err, {})), err.metadata);
  }

  /** Refuses the request at the HTTP level (it is no Connect unary call of a method served here). */
  refuse(httpStatus: number): void {
    if (this.open) this.respond(httpStatus, undefined, Buffer.alloc(0));
  }

  private respond(status: number, contentType: string | undefined, body: Buffer, metadata?: Headers): void {
    this.started = true;
    const headers: http.OutgoingHttpHeaders = { "content-length": body.length };
    if (contentType) headers["content-type"] = contentType;
    if (metadata) putCarriedMetadata(metadata, headers);
    if (this.out instanceof http.ServerResponse) {
      if (this.closeAfter) headers.connection = "close";
      this.out.writeHead(status, headers).end(body);
    } else {
      this.out.respond({ ...headers, ":status": status });
      this.out.end(body);
    }
  }
}

/** The request's body, within MAX_MESSAGE_BYTES; a connection lost or a stream reset before its end is a cancel. */
function readBody(req: Readable & { aborted?: boolean }, declaredLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => new ConnectError(`the request is larger than ${MAX_MESSAGE_BYTES} bytes`, Code.ResourceExhausted);
    if (declaredLength > MAX_MESSAGE_BYTES) return reject(tooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    const data = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_MESSAGE_BYTES) return void chunks.push(chunk);
      detach();
      reject(tooLarge());
    };
    const end = () => {
      detach();
      // A caller that resets an HTTP/2 stream mid-request ends it too.
      if (req.aborted) reject(new ConnectError("the caller cancelled", Code.Canceled));
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const closed = () => {
      detach();
      reject(new ConnectError("the caller cancelled", Code.Canceled));
    };
    // Detached once settled, as the gRPC side's are (grpc-server-stream.ts).
    const detach = () => {
      req.off("data", data);
      req.off("end", end);
      req.off("close", closed);
    };
    req.on("data", data);
    req.once("end", end);
    req.once("close", closed);
  });
}
