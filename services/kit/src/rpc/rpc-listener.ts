import type http from "node:http";
import type http2 from "node:http2";
import net from "node:net";

/**
 * One cleartext port for both HTTP versions: Node's HTTP/2 cleartext server cannot also take
 * HTTP/1.1, so each connection goes to the HTTP/2 server or to the HTTP/1.1 one (which never listen
 * themselves) by its first bytes: HTTP/2 when it opens with HTTP/2's connection preface (prior
 * knowledge, as every h2c gRPC client does). Connection routing only: both servers run the same
 * Connect handler. Under TLS, ALPN chooses instead (rpc-server.ts).
 */

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
// A connection that has not said which protocol it speaks by then is dropped.
const FIRST_BYTES_TIMEOUT_MS = 10_000;

export function createCleartextListener(h2: http2.Http2Server, h1: http.Server): net.Server {
  return net.createServer({ noDelay: true }, (socket) => dispatch(socket, h2, h1));
}

/** Reads until the first bytes tell HTTP/2's preface from an HTTP/1.1 request, then hands the socket over with them unread. */
function dispatch(socket: net.Socket, h2: http2.Http2Server, h1: http.Server): void {
  let seen: Buffer = Buffer.alloc(0);
  const drop = () => socket.destroy();
  socket.setTimeout(FIRST_BYTES_TIMEOUT_MS, drop);
  socket.on("error", drop);
  const data = (chunk: Buffer) => {
    seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
    const compared = Math.min(seen.length, PREFACE.length);
    const isH2 = seen.subarray(0, compared).equals(PREFACE.subarray(0, compared));
    if (isH2 && seen.length < PREFACE.length) return;
    socket.off("data", data);
    socket.off("error", drop);
    socket.setTimeout(0, drop);
    socket.pause();
    socket.unshift(seen);
    if (isH2) {
      // The HTTP/2 session reads what is buffered itself, then takes the socket over.
      h2.emit("connection", socket);
    } else {
      h1.emit("connection", socket);
      socket.resume();
    }
  };
  socket.on("data", data);
}
