import { Code, ConnectError } from "@connectrpc/connect";
import http2 from "node:http2";
import { frame, FramedBody, MAX_MESSAGE_BYTES, putCarriedMetadata } from "./grpc-wire";
import type { Exchange, Refusal } from "./rpc-call";

/**
 * The server's side of one gRPC call on an HTTP/2 stream: what the request headers ask for, the
 * request's message, and the answer (messages, then the status in trailers, or a trailers-only
 * status when no message went out). What gRPC over HTTP/2 prescribes, and no more than the kit's
 * unary and server-streaming methods need.
 */

const { HTTP2_HEADER_STATUS, HTTP2_HEADER_CONTENT_TYPE } = http2.constants;
const ANSWER_HEADERS = { [HTTP2_HEADER_STATUS]: 200, [HTTP2_HEADER_CONTENT_TYPE]: "application/grpc", "grpc-accept-encoding": "identity" };
const GRPC_TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/** Whether an HTTP/2 request is a gRPC call; any other goes to the Connect side. */
export const isGrpc = (headers: http2.IncomingHttpHeaders): boolean => String(headers[HTTP2_HEADER_CONTENT_TYPE] ?? "").startsWith("application/grpc");

/** Why the request headers cannot start a call, as the HTTP status or gRPC status to answer; null when they can. */
export function refusalOf(headers: http2.IncomingHttpHeaders): Refusal | null {
  const contentType = String(headers[HTTP2_HEADER_CONTENT_TYPE] ?? "");
  if (headers[":method"] !== "POST") return { httpStatus: 405 };
  if (!/^application\/grpc(\+proto)?(;|$)/.test(contentType)) return { httpStatus: 415 };
  const encoding = headers["grpc-encoding"];
  if (encoding !== undefined && encoding !== "identity") return new ConnectError(`grpc-encoding ${String(encoding)} is not supported (send identity)`, Code.Unimplemented);
  return null;
}

/** The caller's deadline (epoch ms) from grpc-timeout, or undefined when it set none. */
export function deadlineOf(headers: http2.IncomingHttpHeaders, now = Date.now()): number | undefined {
  const match = GRPC_TIMEOUT.exec(String(headers["grpc-timeout"] ?? ""));
  return match ? now + Number(match[1]) * TIMEOUT_UNIT_MS[match[2]] : undefined;
}

/** Reads the request's one message; rejects with the ConnectError to answer when the body is not exactly one uncompressed message. */
export function readMessage(stream: http2.ServerHttp2Stream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const body = new FramedBody();
    const data = (chunk: Buffer) => {
      if (body.add(chunk)) return;
      stream.pause();
      stream.off("data", data);
      reject(new ConnectError(`the request is larger than ${MAX_MESSAGE_BYTES} bytes`, Code.ResourceExhausted));
    };
    stream.on("data", data);
    stream.once("end", () => {
      // Detached: a closed stream can stay reachable until a full collection, and its listeners with it.
      stream.off("data", data);
      // A caller that resets the stream mid-request (RST_STREAM) ends it too: cancelled, not malformed.
      if (stream.aborted) return reject(new ConnectError("the caller cancelled", Code.Canceled));
      const message = body.message();
      if (message) resolve(message);
      else reject(new ConnectError("the request is not one uncompressed gRPC message", Code.InvalidArgument));
    });
  });
}

/** One gRPC call on its stream: the request's message, then the answer's messages as they come, then the status. */
export class GrpcExchange implements Exchange {
  readonly format = "proto";
  private started = false;
  private trailers: http2.OutgoingHttpHeaders = { "grpc-status": "0" };

  constructor(private readonly stream: http2.ServerHttp2Stream) {}

  /** False once the caller has gone (reset, cancelled, connection lost): nothing more can be sent. */
  get open(): boolean {
    return !this.stream.closed && !this.stream.destroyed;
  }

  get closing(): http2.ServerHttp2Stream {
    return this.stream;
  }

  read(): Promise<Buffer> {
    return readMessage(this.stream);
  }

  send(message: Buffer): void {
    if (message.length > MAX_MESSAGE_BYTES) throw new ConnectError(`the answer is larger than ${MAX_MESSAGE_BYTES} bytes`, Code.ResourceExhausted);
    if (!this.open) return;
    if (!this.started) {
      this.started = true;
      this.stream.respond(ANSWER_HEADERS, { waitForTrailers: true });
      this.stream.once("wantTrailers", () => this.stream.sendTrailers(this.trailers));
    }
    this.stream.write(frame(message));
  }

  /** Ends the call: OK, or the error's status (in the headers when no message went out). */
  end(err?: ConnectError): void {
    if (!this.open) return;
    const status = err ? statusHeaders(err) : this.trailers;
    if (!this.started) {
      this.started = true;
      this.stream.respond({ ...ANSWER_HEADERS, ...status }, { endStream: true });
      return;
    }
    this.trailers = status;
    this.stream.end();
  }

  /** Refuses the call at the HTTP level (no gRPC status: the request was no gRPC call). */
  refuse(httpStatus: number): void {
    if (!this.open) return;
    this.started = true;
    this.stream.respond({ [HTTP2_HEADER_STATUS]: httpStatus }, { endStream: true });
  }
}

/** A ConnectError as gRPC status headers: code, percent-encoded message, and our pgw- metadata. */
function statusHeaders(err: ConnectError): http2.OutgoingHttpHeaders {
  const headers: http2.OutgoingHttpHeaders = { "grpc-status": String(err.code), "grpc-message": encodeURIComponent(err.rawMessage) };
  putCarriedMetadata(err.metadata, headers);
  return headers;
}
