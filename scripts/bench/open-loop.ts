import net from "node:net";
import { percentile, type LoadResult } from "./load";

export interface OpenLoopOptions {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  /** A fixed body, or one made per request. */
  body?: string | (() => string);
  /** Arrivals per second, evenly spaced. */
  rate: number;
  durationS: number;
  /** Keep-alive connections at most (requests beyond wait for one, and that wait counts). */
  connections?: number;
}

/** Requests are sent in small batches: this often, each carrying what became due meanwhile. */
const TICK_MS = 2;

/** A complete HTTP/1.1 response at the start of `buf`: its status and length, or null while incomplete. */
export function parseResponse(buf: Buffer): { status: number; length: number; close: boolean } | null {
  const headEnd = buf.indexOf("\r\n\r\n");
  if (headEnd < 0) return null;
  const head = buf.toString("latin1", 0, headEnd).toLowerCase();
  const status = Number(head.slice(9, 12));
  const close = /\r\nconnection: *close/.test(head);
  const declared = /\r\ncontent-length: *(\d+)/.exec(head);
  if (declared) {
    const length = headEnd + 4 + Number(declared[1]);
    return buf.length >= length ? { status, length, close } : null;
  }
  if (/\r\ntransfer-encoding: *chunked/.test(head)) {
    const last = buf.indexOf("\r\n0\r\n\r\n", headEnd + 2);
    return last < 0 ? null : { status, length: last + 7, close };
  }
  return { status, length: headEnd + 4, close }; // 204, 304 or a response without a body
}

interface Pending {
  bytes: Buffer;
  dueAt: number;
}

/**
 * An open-loop load at a constant arrival rate, as wrk2 or k6's constant-arrival-rate run it:
 * request i is due at start + i / rate whatever became of the earlier ones, and its latency counts
 * from that due time (so a stall of the system or of this generator shows in the figures instead of
 * silently lowering the rate). autocannon's `overallRate` is a different load: each connection
 * sends back to back until its per-second quota is spent, then waits for the next second, so
 * "1,000/s offered" arrives as a burst of 32 closed-loop connections for part of each second; and
 * its coordinated-omission correction assumes 1 ms between a connection's requests, adding a
 * made-up sample per millisecond of every slow answer.
 *
 * It writes prebuilt HTTP/1.1 requests on raw keep-alive sockets, one outstanding request per
 * socket, because it shares the machine with the system it measures: an HTTP client library
 * (undici) cost ≈ 0.36 ms of CPU a request here, taken from the units under test.
 */
export async function openLoop(name: string, opts: OpenLoopOptions): Promise<LoadResult> {
  const url = new URL(opts.url);
  const maxConnections = opts.connections ?? 64;
  const total = Math.round(opts.rate * opts.durationS);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let outstanding = 0;
  const queue: Pending[] = [];
  /** Connected sockets without a request, each as the function that sends one on it. */
  const idle: ((pending: Pending) => void)[] = [];
  let allAnswered: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => (allAnswered = resolve));
  const sockets = new Set<net.Socket>();

  const head = [`${opts.method ?? "GET"} ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`];
  for (const [key, value] of Object.entries(opts.headers ?? {})) head.push(`${key}: ${value}`);
  const requestBytes = (body: string | undefined) =>
    Buffer.from(`${head.join("\r\n")}\r\ncontent-length: ${body === undefined ? 0 : Buffer.byteLength(body)}\r\n\r\n${body ?? ""}`);
  const fixed = typeof opts.body === "function" ? undefined : requestBytes(opts.body);

  const finish = (failed: boolean) => {
    if (failed) errors++;
    outstanding--;
    if (outstanding === 0 && latencies.length + errors === total) allAnswered();
  };

  const connect = () => {
    const socket = net.connect(Number(url.port || 80), url.hostname);
    sockets.add(socket);
    socket.setNoDelay(true);
    let connected = false;
    let current: Pending | undefined;
    let buf: Buffer = Buffer.alloc(0);
    const sendOn = (pending: Pending) => {
      current = pending;
      socket.write(pending.bytes);
    };
    const next = () => {
      const pending = queue.shift();
      if (pending) sendOn(pending);
      else idle.push(sendOn);
    };
    socket.on("connect", () => {
      connected = true;
      next();
    });
    socket.on("data", (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      const res = current && parseResponse(buf);
      if (!res || !current) return;
      latencies.push(performance.now() - current.dueAt);
      if (res.status < 200 || res.status >= 300) non2xx++;
      buf = buf.subarray(res.length);
      current = undefined;
      finish(false);
      if (res.close) socket.end();
      else next();
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      sockets.delete(socket);
      const at = idle.indexOf(sendOn);
      if (at >= 0) idle.splice(at, 1);
      if (current) finish(true);
      // A server that cannot be reached fails what waits; one that closed a used connection gets a new one.
      if (!connected) for (const _ of queue.splice(0)) finish(true);
      else if (queue.length > 0) connect();
    });
  };

  const send = (pending: Pending) => {
    outstanding++;
    const sendOn = idle.pop();
    if (sendOn) return sendOn(pending);
    queue.push(pending);
    if (sockets.size < maxConnections) connect();
  };

  const started = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * opts.rate) + 1);
    for (; sent < due; sent++) {
      const bytes = fixed ?? requestBytes((opts.body as () => string)());
      send({ bytes, dueAt: started + (sent * 1000) / opts.rate });
    }
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  if (outstanding > 0) await answered;
  const elapsedS = (performance.now() - started) / 1000;
  for (const socket of sockets) socket.destroy();
  return {
    name,
    rps: Math.round(latencies.length / elapsedS),
    p50: Math.round(percentile(latencies, 50)),
    p99: Math.round(percentile(latencies, 99)),
    non2xx,
    errors,
    requests: latencies.length,
  };
}
