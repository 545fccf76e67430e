import http from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { ERROR_HTTP_STATUS, errorBody, type ErrorCode } from "@pgw/contracts";

type Listener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A JSON error answer written by hand, for the few cases Node's HTTP layer would answer itself. */
function rawErrorResponse(code: ErrorCode, message: string): string {
  const body = JSON.stringify(errorBody(code, message));
  return [
    `HTTP/1.1 ${ERROR_HTTP_STATUS[code]} ${http.STATUS_CODES[ERROR_HTTP_STATUS[code]]}`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    "",
    body,
  ].join("\r\n");
}

// What a request Node could not parse means publicly (Node itself would send an empty 400, 431 or
// 408; docs/architecture.md, Error body: every 4xx has the body, with a code of Error codes).
function clientErrorResponse(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case "HPE_HEADER_OVERFLOW":
      return rawErrorResponse("payload_too_large", "request headers are too large");
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return rawErrorResponse("payload_too_large", "chunk extensions are too large");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return rawErrorResponse("validation_error", "request was not received in time");
    default:
      return rawErrorResponse("validation_error", "malformed HTTP request");
  }
}

function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset peer cannot read an answer; a socket that already wrote part of one must not get a second.
  if (err.code !== "ECONNRESET" && socket.writable && (socket as Socket).bytesWritten === 0) {
    socket.end(clientErrorResponse(err), () => socket.destroy());
  } else {
    socket.destroy();
  }
}

/**
 * A client has this long to send its request headers, and the whole request (a 10 MiB receipt
 * upload included) within the second limit; a slow client holding connections open is cut within
 * 5 s of that with a 400 (Node's defaults: 60 s and 300 s, checked every 30 s).
 */
const HEADERS_TIMEOUT_MS = 15_000;
const REQUEST_TIMEOUT_MS = 120_000;
/**
 * How long an idle keep-alive connection stays open. Longer than the idle timeout of load balancers
 * and client pools (60 s is common), so the other side closes first: with Node's 5 s, a client that
 * sends on a connection the server is closing at that moment sees it reset, its request lost.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export interface HttpServerOptions {
  maxHeaderSize?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
}

/** Answers with a JSON body (used where no Koa app is in between). */
export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) }).end(text);
}

/**
 * An HTTP/1.1 server whose every error answer carries the error body, including the ones Node's
 * HTTP layer would otherwise send empty: unparseable requests, oversized headers, an HTTP/1.1
 * request without Host, and an `Expect` other than 100-continue (which is served as if absent,
 * as RFC 9110 allows, rather than refused with 417).
 */
export function createHttpServer(listener: Listener, options: HttpServerOptions = {}): http.Server {
  const serve: Listener = (req, res) => {
    if (req.httpVersion === "1.1" && req.headers.host === undefined) {
      sendJson(res, 400, errorBody("validation_error", "host header is required", [{ field: "host", issue: "is required" }]), { connection: "close" });
      return;
    }
    listener(req, res);
  };
  const headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const server = http.createServer(
    {
      maxHeaderSize: options.maxHeaderSize,
      requireHostHeader: false,
      headersTimeout,
      requestTimeout: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS,
      // How often Node looks for connections past those limits (default 30 s, which a slow client
      // gains); each look wakes the process, so not every second.
      connectionsCheckingInterval: Math.min(5000, headersTimeout),
    },
    serve,
  );
  server.on("checkExpectation", serve);
  server.on("clientError", answerClientError);
  return server;
}
